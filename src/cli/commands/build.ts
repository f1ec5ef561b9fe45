// medbench build SPEC: run the stages whose inputs changed; write results and medbench.lock. Parses the
// options, calls the build (or the roster's builds), prints what it answers.
import { loggerFor } from "../../log/loggers.js";
import type { BuildEvent } from "../../contract/events.js";
import { parse } from "../args.js";
import { sizeHeap } from "../../load/small-run-heap.js";
import type { Command } from "../command.js";
import { buildOptions, oneSpec, optionsOf, projectDir, VARIABLE_OPTIONS } from "../options.js";

export const command: Command = {
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
  --rekey               key every stage even when nothing changed since the last no-op build
  --shard I/N           send only this machine's share of the model requests (no results, no lock);
                        with MEDBENCH_REMOTE, a later plain build anywhere assembles the whole run
  --max-cost USD        refuse a model or judge stage whose estimated cost (its requests without a reply,
                        input tokens as bytes / 4, output at most max_tokens, at the registry's price) is
                        more than is left, and stop one whose replies' cost reaches the limit (exit 1; the
                        replies received are kept)
  --batch               send the model and judge stages' requests without a reply as provider batches
                        (OpenAI's Batch API; a route's \`batch: true\` is the same), at its batch price;
                        without --wait it submits them and exits 3: rerun to collect
  --wait                with --batch, poll until the batches are done, then finish the build (refused
                        without --batch unless a route has \`batch: true\`)
  --roster              build every run the spec's \`check:\` roster names (each its model; runs on
                        different routes at once), then print the check (exit 0 when it holds, 1 otherwise)
  --project DIR         the project root (default: the current directory)
  --json                events as JSON lines on stderr; one JSON summary as the last stdout line
  --quiet               warnings and errors only`,
  run,
};

const OPTIONS = optionsOf(
  ...VARIABLE_OPTIONS,
  "refresh",
  "trust-changed",
  "frozen",
  "rekey",
  "shard",
  "roster",
  "max-cost",
  "batch",
  "wait",
  "project",
  "cache",
  "json",
  "quiet",
);

async function run(argv: string[]): Promise<number> {
  const startedMs = Date.now();
  const { values, positionals } = parse(argv, OPTIONS, "build");
  const specPath = oneSpec(positionals, command, "build", projectDir(values.project));
  if (values.roster) {
    return (await import("../roster-build.js")).buildRoster(specPath, argv, values);
  }
  const { opts, vars } = buildOptions(values);
  const logger = loggerFor(values);
  // A plain build whose last run was a no-op, with nothing it consulted changed since, is that no-op again.
  const recordable =
    opts.refresh.length === 0 && values.shard === undefined && !process.env.MEDBENCH_REMOTE?.trim();
  const noop = recordable ? await import("../noop-record.js") : null;
  const recordKey = noop?.recordKey(argv) ?? "";
  const replayed = noop && !values.rekey ? noop.replayNoop(opts.project.cacheDir, recordKey, logger) : null;
  if (replayed !== null) {
    process.stdout.write(replayed);
    return 0;
  }
  // Loaded here, not above: a no-op build replayed needs none of what follows.
  await (await import("../build-options.js")).addBuildOnlyOptions(opts, values);
  const events: BuildEvent[] = [];
  const emit = (e: BuildEvent) => {
    sizeHeap(e);
    events.push(e);
    logger.log(e);
  };
  const { runBuild } = await import("../build-run.js");
  const { incompleteVerdict, jsonSummary } = await import("../build-verdict.js");
  const { report, specHash } = await runBuild({ specPath, vars, opts, emit });
  const stdout = values.json ? jsonSummary(specHash, report) : "";
  process.stdout.write(stdout);
  const noopEvents = noop?.noopEvents(events, report);
  if (noop && noopEvents) noop.recordNoop(opts.project.cacheDir, recordKey, startedMs, noopEvents, stdout);
  const verdict = incompleteVerdict(report.unwhole);
  if (verdict.stderr) process.stderr.write(verdict.stderr);
  return verdict.exit;
}
