// medbench status SPEC: every stage fresh, stale (and why) or never built.
import { paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import type { Command } from "../command.js";
import { buildOptions, oneSpec, optionsOf, VARIABLE_OPTIONS } from "../options.js";

export const command: Command = {
  help: `usage: medbench status SPEC [options]

  Takes the build options that choose what is built (--model, --judge, --registry, --data-dir, --subset,
  --limit, --configurations, --var) and --project, --cache, --json; it builds and sends nothing.`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    optionsOf(...VARIABLE_OPTIONS, "project", "cache", "json"),
    "status",
  );
  const { opts, vars } = buildOptions(values);
  const { loadRuntime } = await import("../runtime.js");
  const { stageStates } = await import("../../runner/status.js");
  const specPath = oneSpec(positionals, command, "status");
  // Read only: status writes nothing, and sends nothing (a route it cannot find is keyed as none).
  const rt = await loadRuntime(specPath, vars, opts.project.cacheDir);
  const states = await stageStates(rt, opts);
  if (values.json) {
    process.stdout.write(JSON.stringify({ spec_hash: rt.spec.specHash, stages: states }) + "\n");
    return 0;
  }
  const c = paint(useColour(process.stdout));
  process.stdout.write(`${rt.spec.path}  spec_hash ${rt.spec.specHash}\n`);
  for (const s of states) {
    const label =
      s.state === "fresh"
        ? c.green("fresh      ")
        : s.state === "stale"
          ? c.yellow("stale      ")
          : c.dim("never built");
    process.stdout.write(`  ${label} ${s.name} ${c.dim(`(${s.kind})`)}\n`);
    if (s.state !== "fresh") for (const r of s.reasons) process.stdout.write(`      ${r}\n`);
  }
  return 0;
}
