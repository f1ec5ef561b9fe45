// medbench status SPEC: every stage fresh, stale (and why) or never built.
import { paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import type { Command } from "../command.js";
import { BUILD_OPTIONS, buildOptions, oneSpec } from "../options.js";

export const command: Command = {
  synopsis: "status SPEC",
  summary: "every stage: fresh, stale (and why) or never built",
  help: `usage: medbench status SPEC [options]

Says, for every stage of SPEC (a spec file, or the name of a built-in spec), whether it is fresh (its key's
outputs are in the cache), stale (and why: which input, parameter or code changed) or never built, for the
build the same options would run. It reads only: it writes nothing and sends no request.

  --model ROUTE/MODEL   the model whose build to look at (default: the spec's)
  --judge ROUTE/MODEL   a judge model (repeatable), as for build
  --registry FILE       more model routes (repeatable), as for build
  --data-dir DIR        a release you downloaded (or MEDBENCH_DATA_DIR), as for build
  --subset A,B, --limit N, --configurations A,B, --var NAME=VALUE   the build's variables, as for build
  --project DIR         the project root (default: the current directory)
  --json                one JSON line: spec_hash and every stage's state and reasons

examples:
  npx medbench status specs/voice-command.yaml
  npx medbench status specs/voice-command.yaml --model medbench/keyword-stop --json`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, BUILD_OPTIONS);
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
