// syn-snuh-note-errors: paired clinical error detection, ported from its task document
// (docs/protocols/note-errors.md holds every choice where the document is silent).
import type {
  Baseline,
  ItemVerdict,
  MetricRows,
  ScoreOutput,
  RequestConfiguration,
  TaskModule,
  TaskRequest,
} from "../task.js";
import type { Json } from "../../src/util/json.js";
import { readPairs, type Pair } from "./pairs.js";
import { noteRequests } from "./prompts.js";
import { PAGE_EXPOSED_TEST_PAIRS, releaseProblems, type PageCounts } from "./release-check.js";
import { parseVerdict, type ParsedVerdict } from "./verdict.js";
import { parserClass } from "./parser-classes.js";
import { noteItem, pairRows, summary, type NoteItem, type ScoredRequest } from "./scorer.js";
import { reportedMetrics } from "./metrics.js";
import { statistics, toUnitRow } from "./rows.js";
import {
  conjunctionScores,
  conjunctionVerdict,
  constantYes,
  fitConjunction,
  prior,
  randomVerdicts,
  reply,
  type ConjunctionModel,
} from "./baselines.js";

const TEST = "pairs_test.jsonl";
const TRAIN = "pairs_train.jsonl";

/** spec.request.configurations, as the task builds them (tests check the two agree). */
const CONFIGURATIONS: Record<string, RequestConfiguration> = {
  "conservative-greedy": { prompt: "conservative", generation: { temperature: 0 } },
  "conservative-sample": { prompt: "conservative", generation: { temperature: 0.7, top_p: 0.9 } },
  "neutral-greedy": { prompt: "neutral", generation: { temperature: 0 } },
  "neutral-sample": { prompt: "neutral", generation: { temperature: 0.7, top_p: 0.9 } },
};

type NoteMetaOnRequest = ScoredRequest["meta"];
const metaOf = (r: TaskRequest) => r.meta as unknown as NoteMetaOnRequest;

/** The note a request is about, from the release (a baseline reads the note, never the prompt around it). */
function notesOf(pairs: Pair[], requests: TaskRequest[]): { note: string; code: string }[] {
  const byId = new Map(pairs.map((p) => [p.pair_id, p]));
  return requests.map((r) => {
    const m = metaOf(r);
    const p = byId.get(m.pair_id)!;
    return { note: m.side === "error" ? p.error_note : p.clean_note, code: p.header_code };
  });
}

const baselines: Record<string, Baseline> = {
  "medbench/prior": { reply: ({ requests }) => prior(requests.length) },
  "medbench/constant-yes": { reply: ({ requests }) => constantYes(requests.length) },
  "medbench/random": {
    // One draw per note of the whole test file (docs/protocols/note-errors.md):
    // a partial run keeps its draws.
    reply: ({ release, requests, seed }) => {
      const draws = randomVerdicts(readPairs(release.text(TEST), TEST), seed);
      return requests.map((r) => {
        const m = metaOf(r);
        return reply(draws.get(`${m.pair_id}/${m.side}`)!, "random (p = 0.5)");
      });
    },
  },
  "medbench/note-errors-conjunction-lr": {
    params: { C: { type: "number", exclusiveMinimum: 0, description: "inverse L2 strength (10)" } },
    fit: ({ release, params }) =>
      fitConjunction(
        readPairs(release.text(TRAIN), TRAIN),
        Number((params as { C?: number }).C ?? 10),
      ) as unknown as Json,
    reply: ({ release, requests, fitted }) => {
      const model = fitted as unknown as ConjunctionModel;
      const scores = conjunctionScores(model, notesOf(readPairs(release.text(TEST), TEST), requests));
      return scores.map((s) => reply(conjunctionVerdict(model, s), `conjunction LR score ${s.toFixed(6)}`));
    },
  },
};

export const task: TaskModule = {
  contract: 2,
  configurations: CONFIGURATIONS,
  headline: "neutral-greedy",
  params: {
    prompts: {
      page_counts: {
        type: "object",
        description: "the page's counts ({$spec: /counts}): a real release is checked against them",
      },
    },
  },
  buildRequests: ({ release, templates, params, configuration, notice }) => {
    const status = (JSON.parse(templates.prompt_status ?? "{}") as { status?: string }).status;
    if (status !== "original")
      notice?.(
        "note-errors prompts are medbench's RECONSTRUCTION of MEDERRBENCH_EN_PROMPTS, not the authors' " +
          "text (specs/note-errors/prompts/README.md)",
      );
    const pairs = readPairs(release.text(TEST), TEST);
    // The real release is checked against the page before any request exists (the sample is not the page's).
    if (!pairs.some((p) => p.synthetic)) {
      const page = (params as { page_counts?: PageCounts } | null)?.page_counts;
      if (!page?.test || !page.train)
        throw new Error(
          "the prompts stage has no page_counts to check the real release against: " +
            "give it `page_counts: { $spec: /counts }` (specs/note-errors.yaml)",
        );
      const problems = [
        ...releaseProblems(pairs, TEST, page.test, PAGE_EXPOSED_TEST_PAIRS),
        ...releaseProblems(readPairs(release.text(TRAIN), TRAIN), TRAIN, page.train, null),
      ];
      if (problems.length)
        throw new Error(`the release is not the one the task page describes:\n  ${problems.join("\n  ")}`);
    }
    if (pairs.some((p) => p.synthetic))
      notice?.("built from the SYNTHETIC sample (specs/note-errors/sample), not SYN-SNUH data");
    const prompt = configuration?.prompt ?? "neutral";
    const system = templates[`${prompt}_system`],
      user = templates[`${prompt}_user`];
    if (system === undefined || user === undefined)
      throw new Error(`the prompts stage needs the inputs ${prompt}_system and ${prompt}_user`);
    return noteRequests(pairs, { system, user }).map((r) => ({
      ...r,
      unit: (r.meta as { pair_id: string }).pair_id,
      meta: { ...r.meta, subset: "test" },
    }));
  },
  parseReply: ({ reply }) => {
    const v = parseVerdict(reply);
    return { ok: v.verdict !== null, value: v as unknown as Json };
  },
  score: ({ requests, parsed, replies }) => {
    const items = requests.map((r, i) => {
      const v =
        (parsed[i]?.value as unknown as ParsedVerdict | undefined) ?? parseVerdict(noReply(replies[i]));
      const reply = replies[i];
      const view = reply && reply.error === null ? reply : noReply(reply);
      const item = noteItem({ id: r.id, meta: metaOf(r) }, v, parserClass(view, v));
      // Items hold ids, labels and verdicts only: `parsed` is the verdict, never the Evidence text.
      const meta = { ...item.meta, ...(r.configuration ? { configuration: r.configuration } : {}) };
      return { ...item, unit: item.meta.pair_id, meta, parsed: v.verdict as Json };
    });
    return scoreItems(items);
  },
  // A private bundle has no requests: the verdicts come again from the replies, and the Evidence matches
  // (which need the note's reference lines) from the items.
  // A public bundle withholds the replies too (they quote the notes): then the items' verdicts are taken as
  // recorded and only the metrics and tables are computed again from them.
  rescore: ({ items, replies }) =>
    scoreItems(
      items.map((it, i) => {
        if (replies === null) return it as unknown as NoteItem & { unit: string; parsed: Json };
        const r = replies[i];
        const view = r && r.error === null ? r : noReply(r);
        const v = parseVerdict(view);
        const kept = it.verdicts as unknown as NoteItem["verdicts"];
        const has = v.evidence !== null;
        const verdicts: NoteItem["verdicts"] = {
          verdict: v.verdict,
          strict: v.strict,
          reason: v.reason,
          truncated: v.truncated,
          think: v.think,
          evidence: has,
          evidence_hit: has && kept.evidence_hit,
          evidence_hit_chars: has && kept.evidence_hit_chars,
          span_hit: has && kept.span_hit,
          p_line_hit: kept.p_line_hit,
          parser_class: parserClass(view, v),
        };
        return { ...it, parsed: v.verdict as Json, verdicts: verdicts as unknown as Record<string, Json> };
      }) as unknown as (NoteItem & { unit: string; parsed: Json })[],
    ),
  statistics: statistics(),
  baselines,
  privateRelease: {
    why:
      "its requests hold the private test notes, its replies and parses quote them (Evidence, reasoning) " +
      "and carry a per-request hash of the note, and the fitted baseline's vocabulary holds train-note words",
    withhold: ["requests", "fit", "replies", "parsed"],
  },
};

/** Metrics and tables from scored items (the score stage's, and the rescore's). */
function scoreItems(items: (NoteItem & { unit: string; parsed: Json })[]): ScoreOutput {
  const rows = pairRows(items);
  const unitRows = rows.map(toUnitRow);
  const metrics: MetricRows[] = reportedMetrics().map((m) => ({
    name: m.name,
    label: m.label,
    rows: unitRows,
    statistic: m.name,
    ...(m.name === "bcr" ? { primary: true } : {}),
    ...(m.unit ? { unit: m.unit } : {}),
  }));
  return { items: items as unknown as ItemVerdict[], metrics, paired: [], tables: summary(rows, items) };
}

/** A request without a reply record (or with an API error) is parsed as an API error: no verdict. */
function noReply(r: { error: string | null } | null | undefined) {
  return { text: "", error: r?.error ?? "no reply", finish_reason: null, reasoning: false };
}
