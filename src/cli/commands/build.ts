// medbench build SPEC: run the stages whose inputs changed; write results and medbench.lock.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConsoleLogger, JsonLogger, QuietLogger, type Logger } from "../../log/loggers.js";
import type { SummaryRow } from "../../runner/events.js";
import { metricEntries } from "../../util/metrics.js";
import { parse, UsageError } from "../args.js";
import type { Command } from "../command.js";
import { BUILD_OPTIONS, buildOptions, oneSpec } from "../options.js";

export const command: Command = {
  synopsis: "build SPEC",
  summary: "run the stages whose inputs changed; write results and medbench.lock",
  help: `usage: medbench build SPEC [options]

  --model ROUTE/MODEL   the model under test (default: the spec's, e.g. medbench/prior)
  --judge ROUTE/MODEL   a judge model, for specs with a judge stage (repeatable; replaces the spec's list)
  --registry FILE       more model routes (repeatable; later files override)
  --data-dir DIR        a release you downloaded (or MEDBENCH_DATA_DIR); still checked against the pins
  --subset A,B          only these subsets (a partial run)
  --limit N             only the first N items of each subset (a partial run)
  --configurations A,B  request configurations to build (\`all\`, or names; default: the task's headline)
  --var NAME=VALUE      set any variable the spec declares (repeatable)
  --refresh STAGE       rerun this stage (name or kind) even if fresh; for model: send again (repeatable)
  --trust-changed       accept release files that changed since they were trusted on first use
  --frozen              fail instead of changing medbench.lock (for CI)
  --shard I/N           send only this machine's share of the model requests (no results, no lock);
                        with MEDBENCH_REMOTE, a later plain build anywhere assembles the whole run
  --project DIR         the project root (default: the current directory)
  --json                events as JSON lines on stderr; one JSON summary as the last stdout line
  --quiet               warnings and errors only`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...BUILD_OPTIONS, shard: { type: "string" } });
  const specPath = oneSpec(positionals, command, "build");
  const { opts, vars } = buildOptions(values);
  if (values.shard !== undefined) {
    const { parseShard } = await import("../../remote/shard.js");
    const shard = parseShard(values.shard);
    if (typeof shard === "string") throw new UsageError(shard);
    opts.shard = shard;
  }
  // Loaded here, not above, so that `--help` and usage errors stay close to Node's own start-up.
  const { loadRuntime } = await import("../runtime.js");
  const { build } = await import("../../runner/executor.js");
  const rt = await loadRuntime(specPath, vars, opts.project.cacheDir);
  const known = rt.plan.order.flatMap((d) => [d.name, d.kind]);
  for (const name of opts.refresh)
    if (!known.includes(name))
      throw new UsageError(
        `--refresh ${name}: the spec has no stage or stage kind of that name; ` +
          `its stages: ${rt.plan.order.map((d) => d.name).join(", ")}`,
      );
  const logger: Logger = values.json
    ? new JsonLogger()
    : values.quiet
      ? new QuietLogger()
      : new ConsoleLogger();
  const { settleRemotes } = await import("../../remote/store.js");
  let report;
  try {
    report = await build(rt, opts, (e) => logger.log(e));
  } finally {
    await settleRemotes(); // the replies of a failed build reach the shared cache too
  }
  (await import("../../spec/load.js")).rememberParsedSpec(
    rt.spec,
    specPath,
    join(opts.project.cacheDir, "specs"),
  );
  (await import("../../runner/code-memo.js")).saveCodeMemo();
  const summary = report.results ? summaryOf(join(report.results, "metrics.json")) : [];
  // What the result itself says of its provenance is said after every build, fresh or not.
  for (const message of report.results ? noticesOf(join(report.results, "metrics.json")) : [])
    logger.log({ type: "notice", message });
  logger.log({
    type: "build-done",
    specHash: rt.spec.specHash,
    results: report.results,
    summary,
    lockChanged: report.lockChanged,
  });
  if (values.json) {
    process.stdout.write(
      JSON.stringify({
        spec_hash: rt.spec.specHash,
        stages: report.stages.map((s) => ({ name: s.name, kind: s.kind, status: s.status, key: s.key })),
        results: report.results,
      }) + "\n",
    );
  }
  return 0;
}

/** The metrics table's rows, the primary metric first. */
function summaryOf(metricsFile: string): SummaryRow[] {
  if (!existsSync(metricsFile)) return [];
  const m = JSON.parse(readFileSync(metricsFile, "utf8")) as {
    primary?: string;
    metrics?: Record<string, unknown>;
  };
  const rows: SummaryRow[] = metricEntries(m).map(([name, v]) => ({
    metric: name,
    value: v.value ?? null,
    lo: v.lo ?? null,
    hi: v.hi ?? null,
    n: v.n ?? 0,
    method: v.ci_method ?? "",
    unit: v.unit ?? "proportion",
  }));
  return [...rows.filter((r) => r.metric === m.primary), ...rows.filter((r) => r.metric !== m.primary)];
}

function noticesOf(metricsFile: string): string[] {
  if (!existsSync(metricsFile)) return [];
  const m = JSON.parse(readFileSync(metricsFile, "utf8")) as { notices?: unknown };
  return Array.isArray(m.notices) ? m.notices.map(String) : [];
}
