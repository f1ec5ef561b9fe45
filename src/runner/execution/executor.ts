// Runs a planned spec: walk its stages keyed, take the fresh ones, run the rest, record the lock and
// results. One stage's life is a sequence of named steps (key and look up, check, run, store, record), on
// the state one build carries (BuildRun).
import { rmSync } from "../../util/builtins.js";
import { join } from "node:path";
import { acquireFileLock } from "../../util/filelock.js";
import { sha256Hex } from "../../hash/sha256.js";
import { Cache, CorruptObjectError, openCache } from "../store/cache.js";
import type { StageKey } from "../keys/keys.js";
import {
  buildId,
  readLock,
  writeLock,
  type LockBuild,
  type LockSpec,
  type LockFile,
} from "../results/lock.js";
import { projectPath, type Project } from "../project/project.js";
import type { StageContext, StageOutput } from "../../contract/stage.js";
import { checkResultsOwner, resultContents, writeFailure, writeResults } from "../results/results.js";
import type { Emit, StageStatus } from "../../contract/events.js";
import { StageError, DiagnosticError, BuildFailure } from "../../errors.js";
import { stageManifest, type StageManifest } from "../store/outcome.js";
import {
  codeOf,
  newScope,
  stageRunsIsolated,
  privatePartial,
  projectSource,
  refreshed,
  resultsSuffix,
  type BuildOptions,
  type BuildScope,
  type Runtime,
} from "./scope.js";
import { frozenPolicy, shardPolicy, type FrozenPolicy, type ShardPolicy } from "./policy.js";
import { KeyedWalk, type WalkedStage } from "./walk.js";
import { WarmPool } from "./warm.js";
export type { BuildOptions, BuildScope, Runtime } from "./scope.js";
// Where the tests and the CLI have long found them.
export { stageContext } from "./scope.js";

export interface StageReport {
  name: string;
  kind: string;
  status: StageStatus;
  key: StageKey;
  /** Why this run of the stage is not whole (failed requests): the build exits 1
   *  (docs/model-requests.md). */
  incomplete?: string;
}
export interface BuildReport {
  stages: StageReport[];
  /** The stages whose incompleteness makes the build incomplete (exit 1). */
  unwhole: StageReport[];
  results: string | null;
  lockChanged: boolean;
  outputs: Record<string, Record<string, string>>;
}

/** What one build carries from its start to its records. */
interface BuildRun {
  scope: BuildScope;
  lock: LockFile;
  specKey: string;
  variableSet: string;
  /** Why this build is not recorded in medbench.lock, or null. */
  unrecorded: string | null;
  frozen: FrozenPolicy;
  shard: ShardPolicy;
  walk: KeyedWalk;
  reports: StageReport[];
  /** Isolated stages' processes, started ahead of their runs. */
  warm: WarmPool;
}

/**
 * Builds of the same spec with the same variables (and shard) run one at a time, across processes: the
 * second waits for the first, then finds its stages fresh or its replies in the memo, so no request is sent
 * twice.
 */
export async function build(rt: Runtime, opts: BuildOptions, emit: Emit): Promise<BuildReport> {
  const shard = shardPolicy(opts.shard);
  // Before anything is written (even the build lock): the spec's own, and the results folders it may
  // replace.
  checkResultsOwner(rt.spec, opts.project, shard.resultsSuffixes(opts.resultsSuffix));
  const specKey = projectPath(opts.project, rt.spec.path);
  const variableSet = buildId(rt.spec.variables);
  const name = sha256Hex(`${specKey}\n${variableSet}\n${shard.lockName}`);
  const lockFile = join(opts.project.cacheDir, "locks", `${name}.lck`);
  const release = await acquireFileLock(lockFile, {
    staleMs: 120_000,
    heartbeatMs: 10_000,
    onWait: (owner) =>
      emit({
        type: "info",
        message:
          `waiting for another build of ${specKey} with the same variables (${owner}) to finish; ` +
          "it will then reuse that build's replies",
      }),
  }).catch((e: unknown) => {
    throw writeFailure(e, projectPath(opts.project, lockFile), "lock");
  });
  try {
    return await buildLocked(rt, opts, emit, shard);
  } finally {
    release();
  }
}

async function buildLocked(
  rt: Runtime,
  opts: BuildOptions,
  emit: Emit,
  shard: ShardPolicy,
): Promise<BuildReport> {
  const run = startBuild(rt, opts, emit, shard);
  run.frozen.start();
  // What refuses to be keyed (an installed package that is not the one the lock pins) refuses the build
  // before any stage runs, not halfway.
  for (const decl of rt.plan.order) codeOf(run.scope, decl);
  try {
    for await (const walked of run.walk.stages()) {
      // A stage that reads one another share completes: a later build runs it.
      if (walked.waitingOn.length) continue;
      await stageLife(run, walked);
    }
  } finally {
    run.warm.close();
  }
  const outputs = () => Object.fromEntries(run.scope.upstream);
  const unwhole = run.reports.filter((report) => shard.fails(report.incomplete));
  if (await shard.endsAfterStages(run.scope.cache))
    return { stages: run.reports, unwhole, results: null, lockChanged: false, outputs: outputs() };
  const { results, lockChanged } = await recordBuild(run);
  return { stages: run.reports, unwhole, results, lockChanged, outputs: outputs() };
}

/** The build's state before its first stage: the cache, the lock and what it records of these variables. */
function startBuild(rt: Runtime, opts: BuildOptions, emit: Emit, shard: ShardPolicy): BuildRun {
  const { spec, plan } = rt;
  const cache = openCache(
    opts.project.cacheDir,
    opts.env,
    (message) => emit({ type: "warning", message }),
    (message) => emit({ type: "info", message }),
  );
  cache.sweepTemp();
  const lock = readLock(opts.project.lockPath);
  const specKey = projectPath(opts.project, spec.path);
  const previous = lock.specs[specKey];
  const variableSet = buildId(spec.variables, opts.dataDir !== undefined);
  const last = previous?.builds[variableSet]; // the last build of these variables, whatever its spec
  const locked = previous?.spec_hash === spec.specHash ? last : undefined;
  const scope = newScope(rt, opts, cache, previous, emit);

  emit({ type: "build-start", spec: spec.path, specHash: spec.specHash, stages: plan.order.length });
  const unrecorded = unrecordedRun(rt, opts);
  const frozen = frozenPolicy(opts.frozen, { specPath: spec.path, variableSet, locked, unrecorded });
  const walk = new KeyedWalk(projectSource(scope), { cache, locked: last, wording: "build" });
  const warm = new WarmPool(scope);
  return { scope, lock, specKey, variableSet, unrecorded, frozen, shard, walk, reports: [], warm };
}

/** One stage's life: keyed and looked up by the walk; checked against the lock; taken as fresh, or run,
 *  stored and recorded. A failure names the stage (a spec's mistake keeps its own diagnostic). */
async function stageLife(run: BuildRun, walked: WalkedStage): Promise<void> {
  const { decl } = walked;
  const { cache, emit, opts } = run.scope;
  try {
    if (walked.error !== undefined) throw walked.error;
    const keyed = walked.keyed!;
    const forced = refreshed(decl, opts);
    const reused = forced ? null : keyed.fresh;
    run.frozen.stage(decl.name, keyed.key, reused === null, keyed.last);
    if (reused) {
      run.warm.drop(decl.name);
      emit({
        type: "stage-done",
        stage: decl.name,
        kind: decl.kind,
        key: keyed.key,
        status: "fresh",
        ms: 0,
      });
      recordStage(run, walked, reused.outputs, "fresh");
    } else {
      await run.warm.ahead(decl);
      const ran = await runStage(run, walked, forced ? ["--refresh"] : walked.reasons);
      recordStage(run, walked, ran.outputs, "ran", ran.incomplete);
    }
  } catch (e) {
    if (e instanceof DiagnosticError) throw e;
    const message = e instanceof Error ? e.message : String(e);
    emit({ type: "stage-failed", stage: decl.name, kind: decl.kind, message });
    throw new BuildFailure(decl.name, message, e instanceof StageError ? e.fix : undefined);
  } finally {
    for (const temp of walked.temps) rmSync(temp, { force: true, recursive: true });
    cache.stat.save();
  }
}

interface Ran {
  outputs: Record<string, string>;
  incomplete?: string;
}

/** Runs the stage and stores what it made, with its manifest (`reasons`: why it runs, for its stage
 *  line). */
async function runStage(run: BuildRun, walked: WalkedStage, reasons: string[]): Promise<Ran> {
  const { decl } = walked;
  const keyed = walked.keyed!;
  const { scope } = run;
  const { cache, emit } = scope;
  const kind = scope.rt.kinds.get(decl.kind)!;
  emit({ type: "stage-start", stage: decl.name, kind: decl.kind, key: keyed.key, reasons });
  const startMs = performance.now();
  let incomplete: string | undefined;
  const memo = (scope.memo ??= (await import("../replies/memo.js")).memoStore(cache));
  const ctx = { ...walked.ctx!, memo, incomplete: (why: string) => void (incomplete = why) };
  // Task code runs in a process of its own (loaded only here: a no-op build runs no stage).
  const produced = stageRunsIsolated(scope.rt, decl)
    ? await runIsolatedStage(run, walked, ctx)
    : await kind.run(ctx);
  const outputs = await storeOutputs(cache, produced);
  // A stage whose outputs a bundle carries (data fetched, model replies) may differ on a rerun by nature;
  // one computed from its inputs (prompts included) may not.
  const computed = kind.inBundle !== "data" && kind.inBundle !== "model";
  if (keyed.fresh && computed)
    refuseUnreproduced(decl.name, cache, keyed.fresh, outputs, scope.opts.project);
  cache.writeManifest(
    stageManifest({ key: keyed.key, kind: decl.kind, outputs }, keyed.record, keyed.paths, incomplete),
  );
  const ms = performance.now() - startMs;
  emit({ type: "stage-done", stage: decl.name, kind: decl.kind, key: keyed.key, status: "ran", ms });
  return { outputs, ...(incomplete ? { incomplete } : {}) };
}

/** The stage in its process (started ahead, or now); its folder goes with the stage's temporary files. */
async function runIsolatedStage(
  run: BuildRun,
  walked: WalkedStage,
  ctx: StageContext & Required<Pick<StageContext, "incomplete">>,
): Promise<Record<string, StageOutput>> {
  const keyed = walked.keyed!;
  const warm = await run.warm.take(walked.decl, keyed.record.task);
  walked.temps.push(warm.folder);
  const { runStageIsolated } = await import("./isolate.js");
  const kind = run.scope.rt.kinds.get(walked.decl.kind)!;
  return runStageIsolated(run.scope.rt, kind, ctx, { key: keyed.key, warm, stat: run.scope.cache.stat });
}

/** The stage's outputs settle in the walk (its readers are keyed with them) and its line in the report. */
function recordStage(
  run: BuildRun,
  walked: WalkedStage,
  outputs: Record<string, string>,
  status: StageStatus,
  incomplete?: string,
): void {
  const { decl } = walked;
  const key = walked.keyed!.key;
  run.walk.settle(decl, key, outputs);
  if (run.shard.holds(incomplete)) run.walk.hold(decl.name);
  run.reports.push({ name: decl.name, kind: decl.kind, status, key, ...(incomplete ? { incomplete } : {}) });
}

/** After every stage: the results folder, whole, then medbench.lock (a lock never names a build whose
 *  results are not all there). */
async function recordBuild(run: BuildRun): Promise<{ results: string | null; lockChanged: boolean }> {
  const { rt, cache, upstream, emit } = run.scope;
  // A results file naming a missing output fails the build before the lock records it.
  if (rt.spec.results) resultContents(rt.spec, upstream);
  const entry = lockEntry(run);
  run.frozen.lock({ ...run.lock, specs: { ...run.lock.specs, [run.specKey]: entry } }, run.lock);
  const results = await writeResultsFolder(run);
  if (run.unrecorded) emit({ type: "info", message: run.unrecorded });
  const lockChanged = run.frozen.writesLock && !run.unrecorded ? await recordLock(run, entry) : false;
  await cache.remote?.settle(); // uploads end before the build does (a failed one only warns)
  return { results, lockChanged };
}

/** The spec's entry in medbench.lock after this build. */
function lockEntry(run: BuildRun): LockSpec {
  const { rt, previous, newPins } = run.scope;
  const { spec } = rt;
  const stages: LockBuild = { variables: spec.variables, stages: run.walk.outcomes };
  return {
    slug: spec.slug,
    spec_hash: spec.specHash,
    pins: mergePins(previous?.pins, newPins),
    // Every variable set built for this spec_hash stays recorded; a new spec_hash starts afresh.
    builds: { ...(previous?.spec_hash === spec.specHash ? previous.builds : {}), [run.variableSet]: stages },
  };
}

async function writeResultsFolder(run: BuildRun): Promise<string | null> {
  const { scope } = run;
  const { spec } = scope.rt;
  if (!spec.results) return null;
  try {
    return await writeResults({
      spec,
      project: scope.opts.project,
      suffix: resultsSuffix(scope),
      cache: scope.cache,
      upstream: scope.upstream,
      stages: run.walk.outcomes,
      privatePartial: privatePartial(scope.rt, scope.opts),
    });
  } catch (e) {
    // Damaged after its stage was judged fresh (read() removed it): the next build recomputes it.
    if (e instanceof CorruptObjectError)
      throw new BuildFailure("results", `${e.message}; it was removed`, "build again: its stage runs again");
    throw e;
  } finally {
    scope.cache.stat.save(); // the results files' hashes, so that the next no-op does not read them
  }
}

/** Writes the spec's entry, merged with what the lock holds by then; whether the lock changed. */
async function recordLock(run: BuildRun, entry: LockSpec): Promise<boolean> {
  const { project } = run.scope.opts;
  const { spec } = run.scope.rt;
  const { specKey, variableSet } = run;
  try {
    return await writeLock(
      project.lockPath,
      join(project.cacheDir, "locks", "medbench.lock.lck"),
      (lock) => {
        // Read again under the lock: a build of other variables may have recorded itself meanwhile.
        const now = lock.specs[specKey];
        lock.specs[specKey] =
          now?.spec_hash === spec.specHash
            ? {
                ...entry,
                pins: mergePins(now.pins, run.scope.newPins),
                builds: { ...now.builds, [variableSet]: entry.builds[variableSet]! },
              }
            : entry;
      },
    );
  } catch (e) {
    throw writeFailure(e, "medbench.lock", "lock");
  }
}

/** Why this build is not recorded in medbench.lock, or null. The lock is committed: a partial run of a
 *  private release (few private items) recorded there would publish hashes (of its requests, and every key
 *  after them) that confirm a guess of those items. */
function unrecordedRun(rt: Runtime, opts: BuildOptions): string | null {
  if (!privatePartial(rt, opts)) return null;
  return (
    "a partial run of a task whose release is private is not recorded in medbench.lock: its hashes " +
    "would confirm a guess of the few private items it holds"
  );
}

/**
 * `--refresh` ran a stage again under a key the cache already held, and it made other outputs: the key
 * misses something the stage reads (verify recomputes such a stage, so its outputs must follow from its
 * key). Said, naming the stage, and the cached entry is kept, not silently replaced (Bazel's reproducibility
 * check is the model; model and data stages, whose outputs a server or a release gives, are exempt).
 */
function refuseUnreproduced(
  stage: string,
  cache: Cache,
  cached: StageManifest,
  outputs: Record<string, string>,
  project: Project,
): void {
  const names = [...new Set([...Object.keys(cached.outputs), ...Object.keys(outputs)])];
  const differ = names.filter((name) => cached.outputs[name] !== outputs[name]);
  if (!differ.length) return;
  throw new StageError(
    `--refresh ran stage ${stage} again under the same key, ` +
      `and its outputs differ (${differ.join(", ")}): ` +
      'its key misses something it reads (docs/records.md, "What a stage\'s key covers"); the cache ' +
      "keeps the earlier outputs",
    "find what the stage reads that its key does not hold (an undeclared environment variable, a file " +
      "outside the task folder, a clock or randomness not drawn from its seed) and make it an input; to " +
      `drop the cached entry instead, remove ${projectPath(project, cache.manifestPath(cached.key))}`,
  );
}

async function storeOutputs(
  cache: Cache,
  produced: Record<string, StageOutput>,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(produced).sort()) {
    const output = produced[name]!;
    out[name] =
      typeof output === "string" || output instanceof Uint8Array
        ? cache.put(output)
        : cache.adopt(output.file, output.sha256);
  }
  return out;
}

function mergePins(
  old: LockSpec["pins"] | undefined,
  fresh: Record<string, Record<string, string>>,
): LockSpec["pins"] {
  const out: LockSpec["pins"] = {};
  for (const source of new Set([...Object.keys(old ?? {}), ...Object.keys(fresh)]))
    out[source] = { ...(old?.[source] ?? {}), ...(fresh[source] ?? {}) };
  return out;
}
