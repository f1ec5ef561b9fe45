// medbench status SPEC: every stage fresh, stale (and why) or never built.
import { paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import type { Command } from "../command.js";
import { buildOptions, oneSpec, optionsOf, VARIABLE_OPTIONS } from "../options.js";
import type { StageState } from "../../runner/execution/status.js";
import type { SendEstimate } from "../../model/budget.js";

type Status = { spec: string; specHash: string; states: StageState[] };

export const command: Command = {
  help: `usage: medbench status SPEC [options]

Says, for every stage of SPEC (a spec file, or the name of a built-in spec), whether it is fresh (its key's
outputs are in the cache), stale (and why: which input, parameter or code changed) or never built, for the
build the same options would run. It reads only: it writes nothing and sends no request. For a model or judge
stage that is not fresh, whose inputs are built, it estimates what a build would send: the requests without
a reply, their input tokens (counted as the bodies' bytes / 4: an estimate), the most output tokens their
max_tokens allows, and the cost at the registry's price.

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
  const { values, positionals } = parse(
    argv,
    optionsOf(...VARIABLE_OPTIONS, "project", "cache", "json"),
    "status",
  );
  const { opts, vars } = buildOptions(values);
  const specPath = oneSpec(positionals, command, "status", opts.project.root);
  // A no-op build of the same arguments read and checked each --registry file, and its record holds their
  // stat signatures: when it answers, they are unchanged (reading them again cost 2.4x `node -e 0`).
  const recorded = await fromNoopRecord(argv, opts);
  if (!recorded) await checkRegistries(opts.registryFiles);
  const { spec, specHash, states } = recorded ?? (await keyed(specPath, vars, opts));
  if (values.json) {
    process.stdout.write(JSON.stringify({ spec_hash: specHash, stages: states }) + "\n");
    return 0;
  }
  const colour = paint(useColour(process.stdout));
  // Loaded only for an estimate to print: a status answered from a no-op's record has none.
  const price = states.some((state) => state.estimate) ? await import("../../model/price.js") : null;
  process.stdout.write(`${spec}  spec_hash ${specHash}\n`);
  for (const state of states) {
    const label =
      state.state === "fresh"
        ? colour.green("fresh      ")
        : state.state === "stale"
          ? colour.yellow("stale      ")
          : colour.dim("never built");
    process.stdout.write(`  ${label} ${state.name} ${colour.dim(`(${state.kind})`)}\n`);
    if (state.state !== "fresh")
      for (const reason of state.reasons) process.stdout.write(`      ${reason}\n`);
    for (const [model, estimate] of Object.entries(state.estimate ?? {}))
      process.stdout.write(`      would send ${model}: ${estimateLine(estimate, price!.dollars)}\n`);
  }
  return 0;
}

/** Each --registry file given is read and checked, whether a stage needs routes or not, as build does:
 *  a missing or broken file named on the command line is an error, not a status. */
async function checkRegistries(files: string[]): Promise<void> {
  if (files.length === 0) return;
  const { commandRoutes } = await import("../../model/routes.js");
  commandRoutes(files).check();
}

/** A stage's estimate as status shows it: an estimate, and says so. */
function estimateLine(estimate: SendEstimate, dollars: (usd: number) => string): string {
  const output =
    estimate.output_tokens === null
      ? "no bound on output tokens (no max_tokens)"
      : `at most ${estimate.output_tokens} output tokens`;
  const cost =
    estimate.cost_usd !== null
      ? `estimated ${dollars(estimate.cost_usd)} at the registry's price`
      : estimate.output_tokens === null
        ? "cost unbounded"
        : "no price in the registry";
  const input = `about ${estimate.input_tokens} input tokens (bytes / 4)`;
  return `${estimate.requests} requests, ${input}, ${output}; ${cost}`;
}

/** Every stage keyed (read only: status writes nothing, and sends nothing; a route it cannot find is keyed
 *  as none). */
async function keyed(
  specPath: string,
  vars: ReturnType<typeof buildOptions>["vars"],
  opts: ReturnType<typeof buildOptions>["opts"],
): Promise<Status> {
  const { loadRuntime } = await import("../../load/runtime.js");
  const { stageStates } = await import("../../runner/execution/status.js");
  const rt = await loadRuntime(specPath, vars, opts.project.cacheDir);
  return { spec: rt.spec.path, specHash: rt.spec.specHash, states: await stageStates(rt, opts) };
}

/** When the last build of the same arguments was a no-op and nothing it consulted changed since, every
 *  stage is still fresh with the key it had: said from that build's record (docs/noop-record.md), as a
 *  no-op build replays it, without keying the stages. */
async function fromNoopRecord(
  argv: string[],
  opts: ReturnType<typeof buildOptions>["opts"],
): Promise<Status | null> {
  if (opts.refresh.length > 0 || process.env.MEDBENCH_REMOTE?.trim()) return null;
  const { freshFromRecord } = await import("../noop-record.js");
  const got = freshFromRecord(opts.project.cacheDir, argv);
  if (!got) return null;
  const states = got.stages.map(
    (stage): StageState => ({
      name: stage.name,
      kind: stage.kind,
      state: "fresh",
      key: stage.key,
      reasons: [],
    }),
  );
  return { spec: got.spec, specHash: got.specHash, states };
}
