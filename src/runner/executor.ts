// Runs a planned spec: key each stage, skip the fresh ones, run the rest, record the lock and results.
import { existsSync, rmSync, readFileSync } from "../util/builtins.js";
import { join, resolve } from "node:path";
import { acquireFileLock } from "./filelock.js";
import { sha256Hex } from "../hash/sha256.js";
import { Cache, CorruptObjectError, openCache } from "./cache.js";
import { stageCode } from "./stage-code.js";
import { explain } from "./explain.js";
import type { UserTask } from "./user-task.js";
import { keyRecord, stageKey, type KeyRecord, type StageKey } from "./keys.js";
import {
  buildId,
  readLock,
  writeLock,
  lockText,
  type LockBuild,
  type LockSpec,
  type LockFile,
} from "./lock.js";
import { insideDir, projectPath, specFilesRoot, type Project } from "./project.js";
import type {
  BuildInfo,
  DataSource,
  InputView,
  StageContext,
  MemoStore,
  StageKind,
  StageOptions,
  StageOutput,
} from "./stage.js";
import { StageError, DiagnosticError, BuildFailure } from "../errors.js";
import { tempName } from "./fsutil.js";
import { checkResultsOwner, resultContents, writeFailure, writeResults } from "./results.js";
import type { Emit, StageStatus } from "./events.js";
import type { SpecFile, StageDecl } from "../spec/load.js";
import type { Plan } from "../graph/plan.js";
import type { TaskModule } from "../../tasks/task.js";
import { installRoot } from "../util/paths.js";
import type { Json } from "../util/json.js";
import type { Shard } from "../remote/shard.js";

export interface BuildOptions {
  project: Project;
  dataDir?: string;
  frozen: boolean;
  trustChanged: boolean;
  refresh: string[]; // stage names or kinds to rerun regardless
  env: Record<string, string | undefined>;
  registryFiles: string[];
  resultsSuffix: string; // ".partial" for runs over part of the items
  /** One machine's share of the model requests: no results and no lock; a plain build assembles them. */
  shard?: Shard;
}

export interface StageReport {
  name: string;
  kind: string;
  status: StageStatus;
  key: StageKey;
  /** Why this run of the stage is not whole (failed requests): the build exits 1 (docs/model-requests.md). */
  incomplete?: string;
}
export interface BuildReport {
  stages: StageReport[];
  results: string | null;
  lockChanged: boolean;
  outputs: Record<string, Record<string, string>>;
}

export interface Manifest {
  key: string;
  kind: string;
  outputs: Record<string, string>;
  record: KeyRecord;
  paths: Record<string, string>;
  incomplete?: string;
}

/** What the stages of one build (or one status) share: what runs, how, and what is keyed so far. */
export interface BuildScope {
  rt: Runtime;
  opts: BuildOptions;
  cache: Cache;
  /** Stage name -> its outputs (name -> sha256), for the stages keyed so far. */
  upstream: Map<string, Record<string, string>>;
  /** Stage name -> the data source a data stage worked out with its key (its readers' `source`). */
  sources: Map<string, DataSource>;
  /** The spec's record in medbench.lock before this build (its pins). */
  previous: LockSpec | undefined;
  /** Pins recorded by this build's stages (trusted on first use). */
  newPins: Record<string, Record<string, string>>;
  emit: Emit;
  /** The reply store, loaded when a stage first runs: keying a stage never reads replies. */
  memo: MemoStore | null;
}

/** Everything a stage's key is made of, given its upstream outputs. */
export async function stageRecord(
  decl: StageDecl,
  scope: BuildScope,
  ctx: StageContext,
): Promise<{ record: KeyRecord; paths: Record<string, string> }> {
  const { rt, upstream, cache } = scope;
  const { spec, task } = rt;
  const project = scope.opts.project;
  const kind = rt.kinds.get(decl.kind)!;
  const root = installRoot();
  const { code, packages, task: taskCode } = stageCode(root, kind, decl.params as Json, task);
  const inputs: Record<string, Record<string, string>> = {};
  const paths: Record<string, string> = {};
  for (const [name, ref] of Object.entries(decl.inputs)) {
    if ("stage" in ref) {
      inputs[name] = upstream.get(ref.stage)!;
    } else {
      const abs = insideDir(specFilesRoot(project, spec.path), ref.file, "input file", spec.path);
      if (!existsSync(abs))
        throw new DiagnosticError([
          {
            file: spec.path,
            key: `stages.${decl.name}.inputs.${name}`,
            message: `input file ${ref.file} does not exist`,
            fix: "create it or correct the path (relative to the project root)",
          },
        ]);
      inputs[name] = { file: await cache.stat.hash(abs) };
      paths[name] = ref.file;
    }
  }
  const identity = kind.identify ? await kind.identify(ctx) : null;
  if (kind.dataSource) scope.sources.set(decl.name, kind.dataSource(ctx));
  return {
    record: keyRecord({
      kind: decl.kind,
      code,
      packages,
      task: taskCode,
      params: decl.params,
      inputs,
      identity,
    }),
    paths,
  };
}

/**
 * The results folder's suffix: `.release` when the spec bundles a (synthetic) sample and this build read the
 * real release instead, so that neither result overwrites the other; then `.partial` for a partial run.
 */
export function resultsSuffix(scope: BuildScope): string {
  const real = [...scope.sources.values()].some((s) => s.hasSample && !s.sample);
  return (real ? ".release" : "") + scope.opts.resultsSuffix;
}

export interface Runtime {
  build: BuildInfo;
  spec: SpecFile;
  plan: Plan;
  kinds: Map<string, StageKind>;
  /** `user`: a task of the user's repository (src/runner/user-task.ts); null for one of the install. */
  /** `reads`: per source of the task folder, the environment variables it reads (task-rules.ts). */
  task: { name: string; module: TaskModule; user?: UserTask | null; reads?: Record<string, string[]> };
}

/**
 * Builds of the same spec with the same variables (and shard) run one at a time, across processes: the second
 * waits for the first, then finds its stages fresh or its replies in the memo, so no request is sent twice.
 */
export async function build(rt: Runtime, opts: BuildOptions, emit: Emit): Promise<BuildReport> {
  // Before anything is written (even the build lock): the spec's own, and the results folders it may replace.
  const partial = opts.resultsSuffix;
  checkResultsOwner(rt.spec, opts.project, opts.shard ? [] : [partial, `.release${partial}`]);
  const specKey = projectPath(opts.project, rt.spec.path);
  const variableSet = buildId(rt.spec.variables);
  const name = sha256Hex(
    `${specKey}\n${variableSet}\n${opts.shard ? `${opts.shard.index}/${opts.shard.count}` : ""}`,
  );
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
    return await buildLocked(rt, opts, emit);
  } finally {
    release();
  }
}

async function buildLocked(rt: Runtime, opts: BuildOptions, emit: Emit): Promise<BuildReport> {
  const { spec, plan, kinds } = rt;
  const project = opts.project;
  const cache = openCache(project.cacheDir, opts.env, (message) => emit({ type: "warning", message }));
  cache.sweepTemp();
  const lock = readLock(project.lockPath);
  const specKey = projectPath(project, spec.path);
  const previous = lock.specs[specKey];
  const variableSet = buildId(spec.variables, opts.dataDir !== undefined);
  const last = previous?.builds[variableSet]; // the last build of these variables, whatever its spec
  const locked = previous?.spec_hash === spec.specHash ? last : undefined;
  const newPins: Record<string, Record<string, string>> = {};
  const upstream = new Map<string, Record<string, string>>();
  const reports: StageReport[] = [];
  const lockStages: LockBuild["stages"] = {};
  // The reply store's modules load when a stage runs, not before: a no-op build needs none of them.
  const scope: BuildScope = {
    rt,
    opts,
    cache,
    upstream,
    sources: new Map(),
    previous,
    newPins,
    emit,
    memo: null,
  };
  emit({ type: "build-start", spec: spec.path, specHash: spec.specHash, stages: plan.order.length });
  const unrecorded = unrecordedRun(rt, opts);
  if (opts.frozen && unrecorded)
    throw new BuildFailure(
      "lock",
      `--frozen checks a build against medbench.lock, and ${unrecorded}`,
      "build it without --frozen",
    );
  // A variable set the lock has never recorded would add an entry: refused whole, before any stage is keyed.
  if (opts.frozen && !locked)
    throw new BuildFailure(
      "lock",
      `medbench.lock records no build of ${spec.path} with ${variableSet || "its variables"}, ` +
        "and --frozen forbids adding one",
      "run `medbench build` without --frozen and commit medbench.lock",
    );

  // What refuses to be keyed (an installed package that is not the one the lock pins) refuses the build
  // before any stage runs, not halfway.
  for (const decl of plan.order)
    stageCode(installRoot(), kinds.get(decl.kind)!, decl.params as Json, rt.task);

  const waiting = new Set<string>(); // --shard: stages left incomplete, and those that read them
  for (const decl of plan.order) {
    const kind = kinds.get(decl.kind)!;
    if (opts.shard && Object.values(decl.inputs).some((r) => "stage" in r && waiting.has(r.stage))) {
      waiting.add(decl.name); // it needs every shard's replies: a later plain build runs it
      continue;
    }
    const temps: string[] = [];
    const ctx = stageContext(decl, scope, temps);
    try {
      const { record, paths } = await stageRecord(decl, scope, ctx);
      const key = stageKey(record);
      const forced = opts.refresh.includes(decl.name) || opts.refresh.includes(decl.kind);
      const cached = await freshManifest(cache, key);
      const manifest = forced ? null : cached;
      // --frozen sends no request: a stage whose last run left requests unanswered would send them.
      const unfinished = opts.frozen && !manifest ? cache.readManifest(key) : null;
      if (unfinished?.key === key && unfinished.incomplete)
        throw new StageError(
          `its last run was incomplete (${unfinished.incomplete}), and --frozen sends no request`,
          "build without --frozen to send the failed requests again, then commit medbench.lock",
        );
      // --frozen decides before a stage runs (before any model request) whether the lock would change.
      if (opts.frozen && locked?.stages[decl.name]?.key !== key) {
        throw new StageError(
          `medbench.lock would change (stage ${decl.name}: its key differs from the locked one), ` +
            "and --frozen forbids it",
          "run `medbench build` without --frozen and commit medbench.lock",
        );
      }
      let status: StageStatus = "fresh";
      let outputs: Record<string, string>;
      let unwhole: string | undefined;
      if (manifest) {
        outputs = manifest.outputs;
        emit({ type: "stage-done", stage: decl.name, kind: decl.kind, key, status, ms: 0 });
      } else {
        status = "ran";
        const reasons = forced ? ["--refresh"] : whyRun(cache, last?.stages[decl.name]?.key, record, paths);
        emit({ type: "stage-start", stage: decl.name, kind: decl.kind, key, reasons });
        const t0 = performance.now();
        let incomplete: string | undefined;
        const memo = (scope.memo ??= (await import("./memo.js")).memoStore(cache));
        const produced = await kind.run({ ...ctx, memo, incomplete: (why) => void (incomplete = why) });
        outputs = await storeOutputs(cache, produced);
        // A stage whose outputs a bundle carries (data fetched, model replies) may differ on a rerun by
        // nature; one computed from its inputs (prompts included) may not.
        const computed = kind.inBundle !== "data" && kind.inBundle !== "model";
        if (cached && computed) refuseUnreproduced(decl.name, cache, cached, outputs, opts.project);
        const m: Manifest = {
          key,
          kind: decl.kind,
          outputs,
          record,
          paths,
          ...(incomplete ? { incomplete } : {}),
        };
        cache.writeManifest(m);
        if (incomplete && opts.shard) waiting.add(decl.name);
        unwhole = incomplete;
        emit({
          type: "stage-done",
          stage: decl.name,
          kind: decl.kind,
          key,
          status,
          ms: performance.now() - t0,
        });
      }
      upstream.set(decl.name, outputs);
      lockStages[decl.name] = { kind: decl.kind, key, outputs };
      reports.push({
        name: decl.name,
        kind: decl.kind,
        status,
        key,
        ...(unwhole ? { incomplete: unwhole } : {}),
      });
    } catch (e) {
      if (e instanceof DiagnosticError) throw e;
      const message = e instanceof Error ? e.message : String(e);
      emit({ type: "stage-failed", stage: decl.name, kind: decl.kind, message });
      throw new BuildFailure(decl.name, message, e instanceof StageError ? e.fix : undefined);
    } finally {
      for (const t of temps) rmSync(t, { force: true, recursive: true });
      cache.stat.save();
    }
  }

  if (opts.shard) {
    // A share of the requests: its replies are in the (shared) cache; results and lock wait for all shares.
    await cache.remote?.settle();
    // A share that did not reach the shared cache is not done: the plain build would send it all again.
    if (cache.remote && !cache.remote.available) {
      const s = opts.shard;
      throw new BuildFailure(
        "shard",
        `shard ${s.index}/${s.count}: the shared cache failed during the build (${cache.remote.failure}), ` +
          "so this share's replies may not all be there; they are kept in this machine's cache",
        `run \`medbench cache push\` from this machine once ${cache.remote.config.url} answers, ` +
          "or build this shard again",
      );
    }
    return { stages: reports, results: null, lockChanged: false, outputs: Object.fromEntries(upstream) };
  }
  // A results file naming a missing output fails the build before the lock records it.
  if (spec.results) resultContents(spec, upstream);
  const entry: LockSpec = {
    slug: spec.slug,
    spec_hash: spec.specHash,
    pins: mergePins(previous?.pins, newPins),
    // Every variable set built for this spec_hash stays recorded; a new spec_hash starts afresh.
    builds: {
      ...(previous?.spec_hash === spec.specHash ? previous.builds : {}),
      [variableSet]: { variables: spec.variables, stages: lockStages },
    },
  };
  const next: LockFile = { ...lock, specs: { ...lock.specs, [specKey]: entry } };
  if (opts.frozen && lockText(next) !== lockText(lock)) {
    throw new BuildFailure(
      "lock",
      "medbench.lock would change, and --frozen forbids it",
      "run `medbench build` without --frozen and commit medbench.lock",
    );
  }
  // Results first, whole, then the lock: a lock never names a build whose results are not all there.
  let results: string | null = null;
  try {
    if (spec.results)
      results = await writeResults({
        spec,
        project,
        suffix: resultsSuffix(scope),
        cache,
        upstream,
        stages: lockStages,
      });
  } catch (e) {
    // Damaged after its stage was judged fresh (read() removed it): the next build recomputes it.
    if (e instanceof CorruptObjectError)
      throw new BuildFailure("results", `${e.message}; it was removed`, "build again: its stage runs again");
    throw e;
  } finally {
    cache.stat.save(); // the results files' hashes, so that the next no-op does not read them
  }
  let lockChanged = false;
  if (unrecorded) emit({ type: "info", message: unrecorded });
  try {
    lockChanged =
      opts.frozen || unrecorded
        ? false
        : await writeLock(project.lockPath, join(project.cacheDir, "locks", "medbench.lock.lck"), (l) => {
            // Read again under the lock: a build of other variables may have recorded itself meanwhile.
            const now = l.specs[specKey];
            l.specs[specKey] =
              now?.spec_hash === spec.specHash
                ? {
                    ...entry,
                    pins: mergePins(now.pins, newPins),
                    builds: { ...now.builds, [variableSet]: entry.builds[variableSet]! },
                  }
                : entry;
          });
  } catch (e) {
    throw writeFailure(e, "medbench.lock", "lock");
  }
  await cache.remote?.settle(); // uploads end before the build does (a failed one only warns)
  return { stages: reports, results, lockChanged, outputs: Object.fromEntries(upstream) };
}

/** Why this build is not recorded in medbench.lock, or null. The lock is committed: a partial run of a
 *  private release (few private items) recorded there would publish hashes (of its requests, and every key
 *  after them) that confirm a guess of those items. */
function unrecordedRun(rt: Runtime, opts: BuildOptions): string | null {
  if (!opts.resultsSuffix || !rt.task.module.privateRelease) return null;
  return (
    "a partial run of a task whose release is private is not recorded in medbench.lock: its hashes " +
    "would confirm a guess of the few private items it holds"
  );
}

/** Why a stage that is not fresh runs: what changed in its key record since the build that recorded
 *  `lastKey` (none: never built; no record: that build's record is not in this cache). */
function whyRun(
  cache: Cache,
  lastKey: string | undefined,
  record: KeyRecord,
  paths: Record<string, string>,
): string[] {
  const same = cache.readManifest(stageKey(record)) as Manifest | null;
  if (same?.incomplete) return [`its last run was incomplete (${same.incomplete})`];
  if (!lastKey) return ["never built"];
  if (lastKey === stageKey(record)) return ["outputs missing from the cache"];
  const old = cache.readManifest(lastKey) as Manifest | null;
  if (!old?.record) return [];
  const reasons = explain(old.record, record, paths);
  return reasons.length ? reasons : ["outputs missing from the cache"];
}

/**
 * `--refresh` ran a stage again under a key the cache already held, and it made other outputs: the key
 * misses something the stage reads (verify recomputes such a stage, so its outputs must follow from its
 * key). Said, naming the stage, and the cached entry is kept, not silently replaced (Bazel's
 * reproducibility check is the model; model and data stages, whose outputs a server or a release gives,
 * are exempt).
 */
function refuseUnreproduced(
  stage: string,
  cache: Cache,
  cached: Manifest,
  outputs: Record<string, string>,
  project: Project,
): void {
  const names = [...new Set([...Object.keys(cached.outputs), ...Object.keys(outputs)])];
  const differ = names.filter((n) => cached.outputs[n] !== outputs[n]);
  if (!differ.length) return;
  throw new StageError(
    `--refresh ran stage ${stage} again under the same key, and its outputs differ (${differ.join(", ")}): ` +
      'its key misses something it reads (docs/records.md, "What a stage\'s key covers"); the cache ' +
      "keeps the earlier outputs",
    "find what the stage reads that its key does not hold (an undeclared environment variable, a file " +
      "outside the task folder, a clock or randomness not drawn from its seed) and make it an input; to " +
      `drop the cached entry instead, remove ${projectPath(project, cache.manifestPath(cached.key))}`,
  );
}

/** The memo of a stage context before any stage ran: keying a stage never reads replies. */
const UNLOADED: MemoStore = {
  get: () => {
    throw new Error("internal: the reply store was read before a stage ran");
  },
  put: () => {
    throw new Error("internal: the reply store was written before a stage ran");
  },
};

/** The stage's manifest when it ran whole and every output it names is in the cache and intact (else it
 *  must run). */
export async function freshManifest(cache: Cache, key: string): Promise<Manifest | null> {
  const m = (await cache.fetchManifest(key)) as Manifest | null;
  if (!m || m.key !== key || m.incomplete) return null;
  for (const h of Object.values(m.outputs)) if (!(await cache.verify(h))) return null;
  return m;
}

async function storeOutputs(
  cache: Cache,
  produced: Record<string, StageOutput>,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(produced).sort()) {
    const v = produced[name]!;
    out[name] =
      typeof v === "string" || v instanceof Uint8Array ? cache.put(v) : cache.adopt(v.file, v.sha256);
  }
  return out;
}

function mergePins(
  old: LockSpec["pins"] | undefined,
  fresh: Record<string, Record<string, string>>,
): LockSpec["pins"] {
  const out: LockSpec["pins"] = {};
  for (const src of new Set([...Object.keys(old ?? {}), ...Object.keys(fresh)]))
    out[src] = { ...(old?.[src] ?? {}), ...(fresh[src] ?? {}) };
  return out;
}

/** The context a stage is keyed and run in; `temps` collects the temporary files it asks for. */
export function stageContext(decl: StageDecl, scope: BuildScope, temps: string[]): StageContext {
  const { rt, upstream, cache, opts, emit, previous, newPins } = scope;
  const memo = scope.memo ?? UNLOADED;
  const inputs: Record<string, InputView> = {};
  for (const [name, ref] of Object.entries(decl.inputs)) {
    if ("file" in ref) {
      const abs = resolve(specFilesRoot(opts.project, rt.spec.path), ref.file);
      inputs[name] = {
        hashes: {},
        read: () => readFileSync(abs),
        text: () => readFileSync(abs, "utf8"),
        path: () => abs,
      };
      continue;
    }
    const hashOf = (out?: string): string => {
      const hashes = upstream.get(ref.stage) ?? {};
      // A named output is looked up, not found by listing the outputs: a release of 20,000 files is read
      // file by file, and listing its names on every read made reading it quadratic (issue 29).
      if (out !== undefined && out in hashes) return hashes[out]!;
      const names = Object.keys(hashes);
      const chosen = out ?? (names.length === 1 ? names[0] : undefined);
      if (chosen === undefined || !(chosen in hashes))
        throw new StageError(
          `stage ${decl.name}: input ${name} has no output ${out ?? "(unnamed)"}; it has ${names.join(", ")}`,
        );
      return hashes[chosen]!;
    };
    inputs[name] = {
      get hashes() {
        return upstream.get(ref.stage) ?? {};
      },
      get source() {
        return scope.sources.get(ref.stage) ?? null;
      },
      read: (out) => cache.read(hashOf(out)),
      text: (out) => cache.read(hashOf(out)).toString("utf8"),
      path: (out) => cache.objectPath(hashOf(out)),
    };
  }
  const stageOptions: StageOptions = {
    projectRoot: specFilesRoot(opts.project, rt.spec.path),
    dataDir: opts.dataDir,
    trustChanged: opts.trustChanged,
    refresh: opts.refresh.includes(decl.name) || opts.refresh.includes(decl.kind),
    env: opts.env,
    registryFiles: opts.registryFiles,
    ...(opts.shard ? { shard: opts.shard } : {}),
  };
  return {
    stage: decl.name,
    build: rt.build,
    params: decl.params as Json,
    inputs,
    task: rt.task.module,
    options: stageOptions,
    memo,
    pins: {
      recorded: (source, path) => newPins[source]?.[path] ?? previous?.pins[source]?.[path],
      record: (source, path, sha) => {
        (newPins[source] ??= {})[path] = sha;
      },
    },
    tempPath: () => {
      const t = tempName(cache.tmp);
      temps.push(t);
      return t;
    },
    hashFile: (p) => cache.stat.hash(p),
    emit,
  };
}
