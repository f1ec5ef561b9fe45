// medbench build SPEC: run the stages whose inputs changed; write results and medbench.lock.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { ConsoleLogger, JsonLogger, QuietLogger, type Logger } from "../../log/loggers.js";
import type { BuildEvent, SummaryRow } from "../../contract/events.js";
import type { Json } from "../../util/json.js";
import { metricEntries, runNotices } from "../../util/metrics.js";
import { consult } from "../../util/consulted.js";
import { parse } from "../args.js";
import { BATCHES_PENDING_EXIT, UsageError } from "../../errors.js";
import { sizeHeap } from "../../load/small-run-heap.js";
import type { Command } from "../command.js";
import { buildOptions, oneSpec, optionsOf, projectDir, VARIABLE_OPTIONS } from "../options.js";
import type { BuildOptions, BuildReport, Runtime } from "../../runner/execution/executor.js";

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

type NoopRecord = typeof import("../noop-record.js");

async function run(argv: string[]): Promise<number> {
  const startedMs = Date.now();
  const { values, positionals } = parse(argv, OPTIONS, "build");
  const specPath = oneSpec(positionals, command, "build", projectDir(values.project));
  if (values.roster) return buildRoster(specPath, argv, values);
  const { opts, vars } = buildOptions(values);
  const logger: Logger = values.json
    ? new JsonLogger()
    : values.quiet
      ? new QuietLogger()
      : new ConsoleLogger();
  // A plain build whose last run was a no-op, with nothing it consulted changed since, is that no-op again.
  const recordable =
    opts.refresh.length === 0 && values.shard === undefined && !process.env.MEDBENCH_REMOTE?.trim();
  const noop = recordable ? await import("../noop-record.js") : null;
  const recordKey = noop?.recordKey(argv) ?? "";
  if (noop && !values.rekey && replayNoop(noop, opts.project.cacheDir, recordKey, logger)) return 0;
  if (values.shard !== undefined) opts.shard = await shardOption(values.shard as string);
  if (values.wait && !values.batch) await waitNeedsBatches(opts);
  if (values.batch || values.wait) opts.batch = { on: Boolean(values.batch), wait: Boolean(values.wait) };
  if (values["max-cost"] !== undefined) opts.budget = await budgetOption(values["max-cost"] as string);
  const rt = await loadBuildRuntime(specPath, vars, opts, logger);
  const events: BuildEvent[] = [];
  const emit = (e: BuildEvent) => {
    sizeHeap(e);
    events.push(e);
    logger.log(e);
  };
  const report = await buildAndRemember(rt, opts, emit, specPath);
  if (report.results) await sayCost(join(report.results, "metrics.json"), opts, emit);
  const stdout = finishBuild(rt.spec.specHash, report, emit, Boolean(values.json));
  const noWarnings = !events.some((e) => e.type === "warning");
  // What came before build-start (waiting for another build of this spec) is this run's, not the build's.
  const start = events.findIndex((e) => e.type === "build-start");
  const built = events.slice(Math.max(0, start));
  if (noop && noWarnings && report.stages.every((stage) => stage.status === "fresh") && !report.lockChanged)
    noop.recordNoop(opts.project.cacheDir, recordKey, startedMs, built, stdout);
  return incompleteExit(report.unwhole);
}

/** Replays the last build when it was a no-op and nothing it consulted changed since; whether it did. */
function replayNoop(noop: NoopRecord, cacheDir: string, recordKey: string, logger: Logger): boolean {
  const replay = noop.replayable(cacheDir, recordKey);
  if (!replay) return false;
  const done = replay.events.length - 1; // the last event is build-done
  for (const e of replay.events.slice(0, done)) logger.log(e);
  logger.log({
    type: "info",
    message:
      `nothing changed since the last build (${replay.files} files, by stat): ` +
      "its stages were not keyed again (--rekey to key them)",
  });
  logger.log(replay.events[done]!);
  process.stdout.write(replay.stdout);
  return true;
}

async function budgetOption(text: string): Promise<BuildOptions["budget"]> {
  const usd = Number(text);
  if (text.trim() === "" || !Number.isFinite(usd) || usd < 0)
    throw new UsageError(`--max-cost takes US dollars (a number, 0 or more), not ${JSON.stringify(text)}`);
  const { Budget } = await import("../../model/budget.js");
  return new Budget(usd);
}

/** --wait polls provider batches: without --batch only a route that sends batches by default makes any. */
async function waitNeedsBatches(opts: BuildOptions): Promise<void> {
  const { commandRoutes } = await import("../../model/routes.js");
  if (
    commandRoutes(opts.registryFiles)
      .list()
      .some((route) => route.batch)
  )
    return;
  throw new UsageError(
    "--wait polls the provider batches of a --batch build, and this build sends none",
    "add --batch (or set batch: true on the route in its registry file), or leave --wait out",
  );
}

async function shardOption(text: string): Promise<BuildOptions["shard"]> {
  const { parseShard } = await import("../../remote/shard.js");
  const shard = parseShard(text);
  if (typeof shard === "string") throw new UsageError(shard);
  return shard;
}

/** The spec's runtime, with every `--refresh` naming one of its stages or kinds. */
async function loadBuildRuntime(
  specPath: string,
  vars: ReturnType<typeof buildOptions>["vars"],
  opts: BuildOptions,
  logger: Logger,
): Promise<Runtime> {
  // Loaded here, not above, so that `--help` and usage errors stay close to Node's own start-up.
  const { loadRuntime } = await import("../../load/runtime.js");
  const { commandRoutes } = await import("../../model/routes.js");
  const rt = await loadRuntime(
    specPath,
    vars,
    opts.project.cacheDir,
    { routes: commandRoutes(opts.registryFiles) },
    (message) => logger.log({ type: "info", message }),
  );
  const known = rt.plan.order.flatMap((decl) => [decl.name, decl.kind]);
  for (const name of opts.refresh)
    if (!known.includes(name))
      throw new UsageError(
        `--refresh ${name}: the spec has no stage or stage kind of that name; ` +
          `its stages: ${rt.plan.order.map((decl) => decl.name).join(", ")}`,
      );
  return rt;
}

/** Builds, then says what came from the shared remote and keeps what the next run reuses. */
async function buildAndRemember(
  rt: Runtime,
  opts: BuildOptions,
  emit: (e: BuildEvent) => void,
  specPath: string,
): Promise<BuildReport> {
  const { build } = await import("../../runner/execution/executor.js");
  const { settleRemotes, readByWriter } = await import("../../remote/store.js");
  let report;
  try {
    report = await build(rt, opts, emit);
  } finally {
    await settleRemotes(); // the replies of a failed build reach the shared cache too
  }
  sayWhatCameFromRemote(report.stages, readByWriter, emit);
  (await import("../../specfile/load.js")).rememberParsedSpec(
    rt.spec,
    specPath,
    join(opts.project.cacheDir, "specs"),
  );
  (await import("../../hash/code-memo.js")).saveCodeMemo();
  return report;
}

/** The build's last events and its stdout (written here): the metrics table, notices, the --json object. */
function finishBuild(
  specHash: string,
  report: BuildReport,
  emit: (e: BuildEvent) => void,
  json: boolean,
): string {
  const metrics = report.results ? join(report.results, "metrics.json") : null;
  const summary = metrics ? summaryOf(metrics) : [];
  // What the result itself says of its provenance is said after every build, fresh or not.
  for (const message of metrics ? noticesOf(metrics) : []) emit({ type: "notice", message });
  emit({ type: "build-done", specHash, results: report.results, summary, lockChanged: report.lockChanged });
  // The verdict is in the result (--json's rule, README "Commands"): complete false goes with exit 1.
  const stdout = json
    ? JSON.stringify({
        spec_hash: specHash,
        complete: report.unwhole.length === 0,
        stages: report.stages.map((stage) => ({
          name: stage.name,
          kind: stage.kind,
          status: stage.status,
          key: stage.key,
          ...(stage.incomplete ? { incomplete: stage.incomplete } : {}),
        })),
        results: report.results,
      }) + "\n"
    : "";
  process.stdout.write(stdout);
  return stdout;
}

/** Stages and replies another machine wrote to the shared remote are trusted as they are (anyone who can
 *  write the bucket could have planted them): say which, and whose they are (docs/remote-cache.md). */
function sayWhatCameFromRemote(
  stages: { name: string; key: string }[],
  readByWriter: (folder: string) => { remote: string; writers: Map<string, string[]> } | null,
  emit: (e: BuildEvent) => void,
): void {
  const nameOf = new Map(stages.map((st) => [`${st.key}.json`, st.name]));
  const manifests = readByWriter("stages/");
  for (const [writer, names] of manifests?.writers ?? []) {
    const mine = names.flatMap((n) => nameOf.get(n) ?? []);
    if (mine.length)
      emit({
        type: "info",
        message:
          `stages ${mine.join(", ")} came from the shared remote ${manifests!.remote}, ` +
          `written by ${writer}`,
      });
  }
  const replies = readByWriter("replies/requests/");
  for (const [writer, keys] of replies?.writers ?? [])
    emit({
      type: "info",
      message:
        `${keys.length} model replies came from the shared remote ${replies!.remote}, ` +
        `written by ${writer}`,
    });
}

/** A build whose model requests did not all get an answer is not a success (exit 1): its results are written
 *  and marked incomplete, and the next build sends only the failed requests (docs/model-requests.md). */
function incompleteExit(unwhole: { name: string; incomplete?: string }[]): number {
  if (unwhole.length === 0) return 0;
  if (unwhole.every((stage) => stage.incomplete?.endsWith("rerun to collect"))) {
    const said = unwhole.map((stage) => `stage ${stage.name}: ${stage.incomplete}`).join("; ");
    process.stderr.write(`${said}\n  (exit ${BATCHES_PENDING_EXIT}: the batches are running)\n`);
    return BATCHES_PENDING_EXIT;
  }
  const stages = unwhole.map((stage) => `stage ${stage.name}: ${stage.incomplete}`).join("; ");
  process.stderr.write(
    `error: the build is incomplete: ${stages}\n` +
      "  the results are written and marked incomplete (metrics.json: incomplete: true), never complete\n" +
      "  fix: rerun the build to retry the failed requests (only those are sent)\n",
  );
  return 1;
}

/**
 * `build SPEC --roster`: one build per run of the spec's check roster (runs on different routes at once,
 * runs on one route in turn: src/cli/roster-build.ts), each with its model and the other options given; then
 * the check. A run that fails or is incomplete does not stop the others (the check names it; exit 1); a
 * usage or spec mistake is exit 2.
 */
async function buildRoster(
  specPath: string,
  argv: string[],
  values: Record<string, unknown>,
): Promise<number> {
  if (values.model !== undefined || values.shard !== undefined)
    throw new UsageError("--roster builds each model of the roster: drop --model and --shard");
  const { loadRuntime } = await import("../../load/runtime.js");
  const { declaredCheck } = await import("../../check/declare.js");
  const spec = (await loadRuntime(specPath, {})).spec;
  const decl = declaredCheck(spec);
  if (!decl)
    throw new UsageError(
      `${specPath} declares no check, so no roster: add a \`check:\` block (docs/check.md)`,
    );
  const rest = argv.filter((arg) => arg !== "--roster");
  const { buildRosterRuns } = await import("../roster-build.js");
  const jobs = decl.roster.map((entry, i) => ({
    label: `roster ${i + 1}/${decl.roster.length}: ${entry.role} ${entry.model}`,
    name: `${entry.role} ${entry.model}`,
    model: entry.model,
  }));
  const codes = await buildRosterRuns(jobs, rest, {
    quiet: Boolean(values.quiet),
    json: Boolean(values.json),
  });
  if (codes.includes(2)) return 2; // a usage or spec mistake: every run meets it
  const failed = codes.some((code) => code !== 0); // an incomplete run is still checked (the check names it)
  const check = (await import("./check.js")).command;
  const project = values.project === undefined ? [] : ["--project", values.project as string];
  const registries = ((values.registry as string[] | undefined) ?? []).flatMap((file) => [
    "--registry",
    file,
  ]);
  const verdict = await check.run([specPath, ...project, ...registries, ...(values.json ? ["--json"] : [])]);
  return Math.max(verdict, failed ? 1 : 0);
}

/** The run's tokens and their cost at the registry's prices (docs/records.md, "Tokens and cost"). */
async function sayCost(
  metricsFile: string,
  opts: BuildOptions,
  emit: (e: BuildEvent) => void,
): Promise<void> {
  if (!existsSync(metricsFile)) return;
  const metrics = JSON.parse(readFileSync(metricsFile, "utf8")) as Record<string, Json>;
  const { runCost, costWords, dollars } = await import("../../model/price.js");
  const { commandRoutes } = await import("../../model/routes.js");
  const routes = commandRoutes(opts.registryFiles);
  const cost = runCost(metrics, (name) => routes.get(name));
  if (cost.tokens === null && cost.usd === null) return;
  const tokens = cost.tokens;
  const counted = tokens
    ? `tokens: prompt ${tokens.prompt} (cached ${tokens.cached}), completion ${tokens.completion} ` +
      `(reasoning ${tokens.reasoning}); `
    : "";
  const spent = opts.budget ? `; spent by this build ${dollars(opts.budget.spent)}` : "";
  emit({ type: "info", message: `${counted}cost ${costWords(cost)} at the registry's prices${spent}` });
}

/** The metrics table's rows, the primary metric first. */
function summaryOf(metricsFile: string): SummaryRow[] {
  consult(metricsFile);
  if (!existsSync(metricsFile)) return [];
  const metrics = JSON.parse(readFileSync(metricsFile, "utf8")) as {
    primary?: string;
    metrics?: Record<string, unknown>;
  };
  const rows: SummaryRow[] = metricEntries(metrics).map(([name, entry]) => ({
    metric: name,
    value: entry.value ?? null,
    lo: entry.lo ?? null,
    hi: entry.hi ?? null,
    n: entry.n ?? 0,
    method: entry.ci_method ?? "",
    unit: entry.unit ?? "proportion",
  }));
  return [
    ...rows.filter((row) => row.metric === metrics.primary),
    ...rows.filter((row) => row.metric !== metrics.primary),
  ];
}

function noticesOf(metricsFile: string): string[] {
  if (!existsSync(metricsFile)) return [];
  return runNotices(JSON.parse(readFileSync(metricsFile, "utf8")) as object);
}
