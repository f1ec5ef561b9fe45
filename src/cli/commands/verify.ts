// medbench verify BUNDLE|DIR [--live]: check a published result by replaying it (and re-sending it).
import { ConsoleLogger, JsonLogger, paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import { sizeHeap } from "../../load/small-run-heap.js";
import { usageError, type Command } from "../command.js";
import { buildOptions, optionsOf } from "../options.js";
import type { LiveReport, VerifyReport } from "../../bundle/verify/index.js";
import { visible, visibleJson } from "../../util/visible.js";

export const command: Command = {
  help: `usage: medbench verify BUNDLE|DIR [--data-dir DIR] [--live [--registry FILE]] [--run-task-code]
    [--project DIR] [--cache DIR] [--json]

  Checks, in order: the bundled spec hashes to the recorded spec_hash (and how a local spec of the same
  task differs); every output matches its recorded hash; with --data-dir, the release matches the pins;
  then parse, score and bootstrap are replayed from the bundled replies and compared with the published
  metrics, intervals and verdicts. Exit 0 when identical, 1 with a table of differences.
  --live re-sends the recorded requests (replies kept apart from the published ones; progress on stderr) and
  reports how many verdicts changed and where each metric lands against the published interval. Requests
  that fail are reported as failures, never as changed verdicts, and leave the live run incomplete: exit 1
  (a second --live sends only the requests without an answer).
  --run-task-code: a bundle of a task of the author's repository carries the task's sources, which the
  replay compiles and runs on this machine with your rights; verify refuses such a bundle without this flag
  (read spec/tasks/ in the bundle first).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    optionsOf("data-dir", "live", "registry", "run-task-code", "project", "cache", "json"),
    "verify",
  );
  if (positionals.length !== 1) throw usageError(command, "verify takes one bundle");
  const { opts } = buildOptions(values);
  const { verifyBundle } = await import("../../bundle/verify/index.js");
  // The live run's progress and warnings on stderr (stdout keeps the report, or the one JSON object).
  const logger = values.json
    ? new JsonLogger()
    : new ConsoleLogger(process.stderr, process.env, process.stderr);
  const report = await verifyBundle(positionals[0]!, {
    project: opts.project,
    dataDir: opts.dataDir,
    live: Boolean(values.live),
    runTaskCode: Boolean(values["run-task-code"]),
    registryFiles: opts.registryFiles,
    env: process.env,
    emit: (event) => {
      sizeHeap(event);
      logger.log(event);
    },
  });
  // Live replies reach the shared cache before the process ends, as a build's do.
  await (await import("../../remote/opened.js")).settleRemotes();
  if (values.json) process.stdout.write(visibleJson(JSON.stringify(report)) + "\n");
  else process.stdout.write(reportLines(report, paint(useColour(process.stdout))).join("\n") + "\n");
  return report.ok ? 0 : 1;
}

type Paint = ReturnType<typeof paint>;

// Every string from the bundle (its slug, member names, values) is shown, never obeyed by the terminal.
const shown = (value: unknown) => visible(typeof value === "string" ? value : String(JSON.stringify(value)));

/** The report as the console shows it: the checks, the differences, the live run, the verdict. */
function reportLines(report: VerifyReport, colour: Paint): string[] {
  const out: string[] = [
    `verify ${shown(report.bundle)}: ${shown(report.slug)}, spec_hash ${shown(report.spec_hash)}`,
  ];
  for (const check of report.checks) {
    const mark =
      check.ok === true
        ? colour.green("ok  ")
        : check.ok === false
          ? colour.red("FAIL")
          : colour.dim("--  ");
    const [first = "", ...rest] = check.lines.map(shown);
    out.push(`  ${mark} ${shown(check.name)}: ${first}`, ...rest.map((line) => `         ${line}`));
  }
  if (report.differences.length) {
    out.push("", "differences (published -> recomputed):");
    for (const diff of report.differences.slice(0, 50))
      out.push(`  ${shown(diff.what)}: ${shown(diff.published)} -> ${shown(diff.recomputed)}`);
    if (report.differences.length > 50)
      out.push(`  … and ${report.differences.length - 50} more (--json for all)`);
  }
  if (report.live)
    out.push(
      "",
      "live rerun (replies kept apart from the published ones):",
      ...liveLines(report.live, colour),
    );
  out.push("", verdictLine(report, colour));
  return out;
}

/** The live run: requests sent otherwise, why it is incomplete, remote replies, verdicts, metrics. */
function liveLines(live: LiveReport, colour: Paint): string[] {
  const out: string[] = [];
  for (const diff of live.request_differences)
    out.push(
      `  ${colour.yellow("warning")} ${shown(diff.stage)} sent ${shown(diff.path)} = ${shown(diff.sent)}, ` +
        `recorded ${shown(diff.recorded)} (the route here differs from the published one)`,
    );
  if (live.incomplete)
    out.push(
      `  ${colour.red("incomplete")}: ${shown(live.incomplete)}; ` +
        "failed requests are left out of what follows, never counted as changed verdicts",
    );
  for (const writer of live.from_remote?.writers ?? [])
    out.push(
      `  ${writer.replies} replies came from the shared remote ${live.from_remote!.remote}, not sent from ` +
        `here: written by ${shown(writer.writer)} (items ${shown(writer.items.slice(0, 10).join(", "))}` +
        `${writer.items.length > 10 ? `, … ${writer.items.length - 10} more` : ""})`,
    );
  if (live.verdicts.length) out.push(`  ${shown(comparedAs(live.compare))}:`);
  // Every verdict the task declares; without a declaration, the first and those that changed.
  const { declared, headline } = live.compare;
  for (const row of live.verdicts.filter((row) => declared || row.changed > 0 || row.key === headline))
    out.push(
      `  ${shown(row.key)} on ${shown(row.group)}: ${row.changed} of ${row.n} verdicts differed ` +
        `(${row.to_true} to true, ${row.to_false} to false)`,
    );
  const figure = (value: number | null) => (value === null ? "–" : value.toFixed(4));
  for (const metric of live.metrics) {
    const where = metric.inside === null ? "" : metric.inside ? "inside" : colour.yellow("outside");
    out.push(
      `  ${shown(metric.metric)}: live ${figure(metric.live)}, published ${figure(metric.published)} ` +
        `[${figure(metric.lo)}, ${figure(metric.hi)}] ${where}`,
    );
  }
  return out;
}

/** The last line: verified, or why not. */
function verdictLine(report: VerifyReport, colour: Paint): string {
  if (report.ok) return colour.green("verified: the published result is reproduced");
  return colour.red(
    report.live?.incomplete && notLive(report)
      ? "NOT verified: the live run is incomplete"
      : onlyPartial(report)
        ? "NOT verified as a published result: a partial run (--limit or --subset) never is one"
        : "NOT verified",
  );
}

/** Whether every check but the live one passed (the live run alone is why verification failed). */
function notLive(report: { checks: { name: string; ok: boolean | null }[] }): boolean {
  return report.checks.every((check) => check.name === "live" || check.ok !== false);
}

/** Whether the bundle's only failing check is that it holds a partial run. */
function onlyPartial(report: { checks: { name: string; ok: boolean | null }[] }): boolean {
  return report.checks.every((check) => (check.name === "partial") === (check.ok === false));
}

/** What the verdict lines compare, in the task's words. */
function comparedAs(compare: LiveReport["compare"]): string {
  const groups = compare.by ? `by ${compare.by}` : "all items as one group";
  if (!compare.declared)
    return `verdicts (the task declares no comparison: every boolean verdict of its items), ${groups}`;
  const head = compare.verdicts[0]!;
  const others = compare.verdicts.slice(1).map((verdict) => verdict.name);
  return (
    `verdicts as the task compares them, ${groups}: headline ${head.name} (${head.label})` +
    (others.length ? `, also ${others.join(", ")}` : "") +
    (compare.leave_out ? `; items with ${compare.leave_out} left out` : "")
  );
}
