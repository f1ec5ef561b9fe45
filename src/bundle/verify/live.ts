// The live check (verify --live): the recorded requests sent again, their verdicts and metrics compared
// with the published ones, failed requests reported as failures and never as changed verdicts.
import { STAGE_KINDS } from "../../../stages/index.js";
import { resultSource } from "../../specfile/load.js";
import { replyFolder } from "../../runner/replies/memo.js";
import { repliesByWriter } from "../../remote/opened.js";
import { comparisonOf, pairVerdicts } from "../../contract/compare.js";
import { metricEntries } from "../../util/metrics.js";
import { jsonDiff, parseJsonLines, type Json } from "../../util/json.js";
import type { TaskModule } from "../../../tasks/task.js";
import { callsModel, type BundleManifest } from "../layout.js";
import { failuresOf } from "./failures.js";
import { runStages } from "./run-stages.js";
import type { Check, LiveReport, LiveRun, Outputs, Replay } from "./types.js";

type MetricsFile = {
  metrics: Record<
    string,
    { value?: number | null; lo?: number | null; hi?: number | null; ci_method?: string } | Json
  >;
  paired?: Record<string, Record<string, Json>>;
};
type Item = { id: string; meta: Record<string, Json>; verdicts: Record<string, Json> };

const outputText = (outputs: Outputs, at: { stage: string; output: string }, otherwise: string) =>
  outputs.get(at.stage)?.get(at.output)?.toString("utf8") ?? otherwise;

/** The items without an answer, live or in the published run: a failure is not a verdict. */
function failedItems(manifest: BundleManifest, published: Outputs, run: LiveRun): Set<string> {
  const failedIds = new Set(run.failures.flatMap((failure) => failure.ids));
  for (const [stage, bundled] of Object.entries(manifest.stages))
    if (callsModel(bundled.kind)) {
      const outputs = Object.fromEntries(published.get(stage) ?? []);
      for (const id of failuresOf(stage, STAGE_KINDS.get(bundled.kind), outputs).ids) failedIds.add(id);
    }
  return failedIds;
}

/** The verdicts the task declares for a paired comparison (as `medbench compare` reads them), published
 *  against live, per verdict and group. */
function compareVerdicts(
  task: TaskModule,
  publishedItems: Item[],
  liveItems: Item[],
  failedIds: Set<string>,
): Pick<LiveReport, "compare" | "verdicts"> {
  const { decl, declared } = comparisonOf(task.compare, publishedItems);
  const verdicts = pairVerdicts(publishedItems, liveItems, decl, failedIds).rows.map(
    ({ verdict, group, pairs }) => {
      const row = { key: verdict, group, n: 0, changed: 0, to_true: 0, to_false: 0, items: [] as string[] };
      for (const { id, a: was, b: now } of pairs) {
        if (typeof now !== "boolean" || typeof was !== "boolean") continue; // no verdict on one side
        row.n++;
        if (now === was) continue;
        row.changed++;
        if (now) row.to_true++;
        else row.to_false++;
        row.items.push(id);
      }
      return row;
    },
  );
  const compare: LiveReport["compare"] = {
    declared,
    by: decl.by ?? null,
    leave_out: decl.leaveOut ?? null,
    headline: decl.verdicts[0]?.name ?? null,
    verdicts: decl.verdicts,
  };
  return { compare, verdicts };
}

/** Each published metric, its interval, the live value, and whether the live value lands inside. */
function compareMetrics(publishedText: string, liveText: string): LiveReport["metrics"] {
  const publishedMetrics = JSON.parse(publishedText) as MetricsFile;
  const liveMetrics = JSON.parse(liveText) as MetricsFile;
  const metrics: LiveReport["metrics"] = [];
  for (const [name, published] of metricEntries(publishedMetrics)) {
    const live = ((liveMetrics.metrics?.[name] ?? {}) as { value?: number | null }).value ?? null;
    const { lo, hi } = published;
    metrics.push({
      metric: name,
      published: published.value ?? null,
      lo: lo ?? null,
      hi: hi ?? null,
      live,
      inside: live === null || lo == null || hi == null ? null : live >= lo && live <= hi,
    });
  }
  return metrics;
}

/** The live requests should carry the recorded fields; a route configured otherwise here changes them. */
function requestDifferences(
  manifest: BundleManifest,
  published: Outputs,
  live: Outputs,
): LiveReport["request_differences"] {
  const differences: LiveReport["request_differences"] = [];
  // A model stage's audit keeps what it sent under `request`; a judge's audit is what it sent.
  const request = (audit: Json) =>
    audit !== null && typeof audit === "object" && !Array.isArray(audit) && "request" in audit
      ? (audit.request ?? null)
      : audit;
  for (const [stage, bundled] of Object.entries(manifest.stages)) {
    if (!callsModel(bundled.kind)) continue;
    const at = { stage, output: "audit" };
    const recorded = JSON.parse(outputText(published, at, "null")) as Json;
    const sent = JSON.parse(outputText(live, at, "null")) as Json;
    for (const diff of jsonDiff(request(recorded), request(sent))) {
      // What came back (counts, token totals), not what was sent.
      if (
        !/thinking_audit|api_errors|truncated|response_format|incomplete|tokens|usage|\/n$/.test(diff.path)
      )
        differences.push({ stage, path: diff.path, recorded: diff.from, sent: diff.to });
    }
  }
  return differences;
}

/** The live replies read from the shared remote in this run, by writer, with the items they answer. */
function remoteReplies(items: Map<string, string>): LiveReport["from_remote"] {
  const got = repliesByWriter(replyFolder("live"));
  if (!got) return null;
  const writers = [...got.writers]
    .map(([writer, keys]) => ({
      writer,
      replies: keys.length,
      items: [...new Set(keys.map((key) => items.get(key) ?? `request ${key.slice(0, 12)}…`))].sort(),
    }))
    .sort((left, right) => (left.writer < right.writer ? -1 : 1));
  return { remote: got.remote, writers };
}

function compareLive(replay: Replay, live: Outputs, run: LiveRun): LiveReport {
  const { manifest, task, published } = replay;
  const failed = run.failures.reduce((sum, failure) => sum + failure.failed, 0);
  const total = run.failures.reduce((sum, failure) => sum + failure.total, 0);
  const incomplete =
    run.stopped ?? (failed > 0 ? `${failed} of ${total} live requests failed (no answer)` : null);
  const failedIds = failedItems(manifest, published, run);
  // A bundle names its results' stages (the member check refused one that does not).
  const items = resultSource(manifest.results["items.jsonl"] ?? "");
  const metricsAt = resultSource(manifest.results["metrics.json"] ?? "");
  const publishedItems = parseJsonLines<Item>(outputText(published, items, ""));
  const liveItems = parseJsonLines<Item>(outputText(live, items, ""));
  const { compare, verdicts } = compareVerdicts(task, publishedItems, liveItems, failedIds);
  const metrics = compareMetrics(outputText(published, metricsAt, "{}"), outputText(live, metricsAt, "{}"));
  const request_differences = requestDifferences(manifest, published, live);
  const failures = run.failures;
  const from_remote = remoteReplies(run.items);
  if (run.stopped)
    return { request_differences, compare, verdicts: [], failures, incomplete, metrics: [], from_remote };
  return { request_differences, compare, verdicts, failures, incomplete, metrics, from_remote };
}

/** The live run as a check: incomplete fails verification (a result not re-sent whole is not re-checked). */
export function liveCheck(live: LiveReport): Check {
  const sent = live.failures.map(
    (failure) => `${failure.stage}: ${failure.total - failure.failed} of ${failure.total} requests answered`,
  );
  if (!live.incomplete) return { name: "live", ok: true, lines: [sent.join("; ") || "no model stage"] };
  return {
    name: "live",
    ok: false,
    lines: [
      `incomplete: ${live.incomplete}`,
      ...sent,
      "the failed requests are no verdicts (left out of the comparison below); run verify --live again: " +
        "it sends only the requests without an answer",
    ],
  };
}

/** Sends the recorded requests again and compares what comes back with the published result. */
export async function runLive(replay: Replay): Promise<LiveReport> {
  const run: LiveRun = { failures: [], stopped: null, items: new Map() };
  const live = await runStages(replay, run);
  return compareLive(replay, live, run);
}
