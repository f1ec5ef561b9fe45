// medbench check SPEC: the task's check (its `check:` block) over the roster's results; exit 0 when it
// holds.
import { paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import { UsageError } from "../../errors.js";
import { usageError, type Command } from "../command.js";
import type { CheckReport } from "../../check/check.js";
import { projectDir, specOrBuiltIn } from "../options.js";

export const command: Command = {
  help: `usage: medbench check SPEC [--registry FILE] [--project DIR] [--json]

  Reads the full results of the roster the spec's \`check:\` block names (results/<slug>/…, built for the
  spec's current spec_hash) and computes every criterion. Exit 0 when the check holds, 1 when it fails or
  is incomplete (a run missing, or too many API errors), 2 for a usage mistake. SPEC may be the name of a
  built-in spec (voice-command). --registry: the route registries you build with, named in the builds
  it suggests.`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: "boolean" }, project: { type: "string" }, registry: { type: "string", multiple: true } },
    "check",
  );
  if (positionals.length !== 1) throw usageError(command, "check takes one spec file");
  const { loadRuntime } = await import("../../load/runtime.js");
  const { declaredCheck } = await import("../../check/declare.js");
  const { runCheck } = await import("../../check/check.js");
  // The criteria load the interval procedures (@stdlib): only when a check runs, never for --help.
  const { pct } = await import("../../check/criteria.js");
  const root = projectDir(values.project);
  const rt = await loadRuntime(specOrBuiltIn(positionals[0]!, "check", root), {});
  const decl = declaredCheck(rt.spec);
  if (!decl)
    throw new UsageError(
      `${rt.spec.path} declares no check: add a \`check:\` block (its roster and criteria, docs/check.md)`,
    );
  const registries = values.registry ?? [];
  // Named as the user named it (a built-in by its name), so the builds it suggests run as shown.
  const spec = { ...rt.spec, path: positionals[0]! };
  const report = await runCheck(spec, decl, root, rt.task.module.headline ?? null, registries);
  if (values.json) process.stdout.write(JSON.stringify(report) + "\n");
  else process.stdout.write(renderCheck(report, paint(useColour(process.stdout)), pct));
  return report.status === "pass" ? 0 : 1;
}

function renderCheck(
  report: CheckReport,
  colour: ReturnType<typeof paint>,
  pct: (x: number | null) => string,
): string {
  const status = (state: string, width = 0) => {
    const text = state.padEnd(width);
    return state === "pass" || state === "ok" || state === "holds"
      ? colour.green(text)
      : state.startsWith("fail")
        ? colour.red(text)
        : colour.yellow(text);
  };
  const on =
    report.inputs === "sample"
      ? "runs on the bundled SYNTHETIC sample, not the release"
      : report.inputs === "release"
        ? "runs on the release"
        : "no runs yet";
  const out = [
    `${report.slug} check (${report.spec}, spec_hash ${report.spec_hash.slice(0, 12)}…; ${on})`,
    "",
    "roster",
  ];
  const width = Math.max(...report.runs.map((x) => x.role.length)),
    wm = Math.max(...report.runs.map((x) => x.model.length));
  for (const x of report.runs) {
    const head = `  ${x.role.padEnd(width)}  ${x.model.padEnd(wm)}  `;
    if (x.status === "missing") out.push(head + `${status("missing")}: ${x.reason}`);
    else
      out.push(
        head +
          `${report.metric} ${pct(x.value).padStart(6)} [${pct(x.lo)}, ${pct(x.hi)}]  ` +
          `${x.status === "ok" ? "" : `${status(x.status)}: ${x.reason}  `}${colour.dim(x.tags.join(", "))}`,
      );
    for (const notice of x.notices) out.push(`  ${" ".repeat(width)}  ${colour.dim("notice")} ${notice}`);
  }
  out.push("", "criteria");
  const wc = Math.max(...report.criteria.map((x) => x.id.length));
  for (const x of report.criteria) out.push(`  ${x.id.padEnd(wc)}  ${status(x.status, 10)}  ${x.summary}`);
  for (const broken of report.broken) out.push(`  ${colour.yellow("broken")} ${broken.dir}: ${broken.why}`);
  for (const modified of report.modified)
    out.push(`  ${colour.yellow("modified since build, not counted")} ${modified.dir}: ${modified.why}`);
  const verdict = report.status === "pass" ? "holds" : report.status === "fail" ? "fails" : "incomplete";
  out.push("", `check ${status(verdict)}`);
  return out.join("\n") + "\n";
}
