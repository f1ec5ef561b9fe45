// medbench verify BUNDLE|DIR [--live]: check a published result by replaying it (and re-sending it).
import { ConsoleLogger, JsonLogger, paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import { sizeHeap } from "../small-run-heap.js";
import { usageError, type Command } from "../command.js";
import { buildOptions, optionsOf } from "../options.js";
import type { LiveReport } from "../../bundle/verify.js";
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
  const { verifyBundle } = await import("../../bundle/verify.js");
  // The live run's progress and warnings on stderr (stdout keeps the report, or the one JSON object).
  const logger = values.json
    ? new JsonLogger()
    : new ConsoleLogger(process.stderr, process.env, process.stderr);
  const r = await verifyBundle(positionals[0]!, {
    project: opts.project,
    dataDir: opts.dataDir,
    live: Boolean(values.live),
    runTaskCode: Boolean(values["run-task-code"]),
    registryFiles: opts.registryFiles,
    env: process.env,
    emit: (e) => {
      sizeHeap(e);
      logger.log(e);
    },
  });
  // Live replies reach the shared cache before the process ends, as a build's do.
  await (await import("../../remote/store.js")).settleRemotes();
  if (values.json) {
    process.stdout.write(visibleJson(JSON.stringify(r)) + "\n");
    return r.ok ? 0 : 1;
  }
  const c = paint(useColour(process.stdout));
  // Every string from the bundle (its slug, member names, values) is shown, never obeyed by the terminal.
  const v = (x: unknown) => visible(typeof x === "string" ? x : String(JSON.stringify(x)));
  const out: string[] = [`verify ${v(r.bundle)}: ${v(r.slug)}, spec_hash ${v(r.spec_hash)}`];
  for (const ch of r.checks) {
    const mark = ch.ok === true ? c.green("ok  ") : ch.ok === false ? c.red("FAIL") : c.dim("--  ");
    const [first = "", ...rest] = ch.lines.map(v);
    out.push(`  ${mark} ${v(ch.name)}: ${first}`, ...rest.map((l) => `         ${l}`));
  }
  if (r.differences.length) {
    out.push("", "differences (published -> recomputed):");
    for (const d of r.differences.slice(0, 50))
      out.push(`  ${v(d.what)}: ${v(d.published)} -> ${v(d.recomputed)}`);
    if (r.differences.length > 50) out.push(`  … and ${r.differences.length - 50} more (--json for all)`);
  }
  if (r.live) {
    out.push("", "live rerun (replies kept apart from the published ones):");
    for (const d of r.live.request_differences)
      out.push(
        `  ${c.yellow("warning")} ${v(d.stage)} sent ${v(d.path)} = ${v(d.sent)}, ` +
          `recorded ${v(d.recorded)} (the route here differs from the published one)`,
      );
    if (r.live.incomplete)
      out.push(
        `  ${c.red("incomplete")}: ${v(r.live.incomplete)}; failed requests are left out of what follows, ` +
          "never counted as changed verdicts",
      );
    for (const w of r.live.from_remote?.writers ?? [])
      out.push(
        `  ${w.replies} replies came from the shared remote ${r.live.from_remote!.remote}, not sent from ` +
          `here: written by ${v(w.writer)} (items ${v(w.items.slice(0, 10).join(", "))}` +
          `${w.items.length > 10 ? `, … ${w.items.length - 10} more` : ""})`,
      );
    if (r.live.verdicts.length) out.push(`  ${v(comparedAs(r.live.compare))}:`);
    // Every verdict the task declares; without a declaration, the first and those that changed.
    const { declared, headline } = r.live.compare;
    for (const x of r.live.verdicts.filter((y) => declared || y.changed > 0 || y.key === headline)) {
      out.push(
        `  ${v(x.key)} on ${v(x.group)}: ${x.changed} of ${x.n} verdicts differed ` +
          `(${x.to_true} to true, ${x.to_false} to false)`,
      );
    }
    for (const m of r.live.metrics) {
      const f = (x: number | null) => (x === null ? "–" : x.toFixed(4));
      const where = m.inside === null ? "" : m.inside ? "inside" : c.yellow("outside");
      out.push(
        `  ${v(m.metric)}: live ${f(m.live)}, published ${f(m.published)} [${f(m.lo)}, ${f(m.hi)}] ${where}`,
      );
    }
  }
  out.push(
    "",
    r.ok
      ? c.green("verified: the published result is reproduced")
      : c.red(
          r.live?.incomplete && notLive(r)
            ? "NOT verified: the live run is incomplete"
            : onlyPartial(r)
              ? "NOT verified as a published result: a partial run (--limit or --subset) never is one"
              : "NOT verified",
        ),
  );
  process.stdout.write(out.join("\n") + "\n");
  return r.ok ? 0 : 1;
}

/** Whether every check but the live one passed (the live run alone is why verification failed). */
function notLive(r: { checks: { name: string; ok: boolean | null }[] }): boolean {
  return r.checks.every((ch) => ch.name === "live" || ch.ok !== false);
}

/** Whether the bundle's only failing check is that it holds a partial run. */
function onlyPartial(r: { checks: { name: string; ok: boolean | null }[] }): boolean {
  return r.checks.every((ch) => (ch.name === "partial") === (ch.ok === false));
}

/** What the verdict lines compare, in the task's words. */
function comparedAs(c: LiveReport["compare"]): string {
  const groups = c.by ? `by ${c.by}` : "all items as one group";
  if (!c.declared)
    return `verdicts (the task declares no comparison: every boolean verdict of its items), ${groups}`;
  const head = c.verdicts[0]!;
  const others = c.verdicts.slice(1).map((v) => v.name);
  return (
    `verdicts as the task compares them, ${groups}: headline ${head.name} (${head.label})` +
    (others.length ? `, also ${others.join(", ")}` : "") +
    (c.leave_out ? `; items with ${c.leave_out} left out` : "")
  );
}
