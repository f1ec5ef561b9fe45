// What the stages of one build (or one status) share, and the context a stage is keyed and run in.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join, resolve } from "node:path";
import type { Cache } from "../store/cache.js";
import { runsIsolated, stageCode, type StageCode } from "../keys/stage-code.js";
import type { UserTask } from "../code/user-task.js";
import type { LockSpec } from "../results/lock.js";
import { insideDir, specFilesRoot, type Project } from "../project/project.js";
import type {
  BuildInfo,
  DataSource,
  InputView,
  StageContext,
  MemoStore,
  StageKind,
  StageOptions,
} from "../../contract/stage.js";
import { tempName } from "../../util/fsutil.js";
import type { StageManifest } from "../store/outcome.js";
import type { KeySource } from "./walk.js";
import type { Emit } from "../../contract/events.js";
import type { SpecFile, StageDecl } from "../../specfile/load.js";
import type { Plan } from "../../graph/plan.js";
import type { TaskModule } from "../../../tasks/task.js";
import { installRoot } from "../../util/paths.js";
import type { Json } from "../../util/json.js";
import type { Shard } from "../../remote/shard.js";
import type { Budget } from "../../model/budget.js";
import { commandRoutes } from "../../model/routes.js";
import { DiagnosticError, StageError } from "../../errors.js";

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
  /** --max-cost: what the model and judge stages may spend (src/model/budget.ts). */
  budget?: Budget;
  /** build --batch (src/contract/stage.ts StageOptions.batch). */
  batch?: { on: boolean; wait: boolean };
}

export interface Runtime {
  build: BuildInfo;
  spec: SpecFile;
  plan: Plan;
  kinds: Map<string, StageKind>;
  /** `user`: a task of the user's repository (src/runner/code/user-task.ts); null for one of the install. */
  /** `reads`: per source of the task folder, the environment variables it reads (task-rules.ts). */
  task: { name: string; module: TaskModule; user?: UserTask | null; reads?: Record<string, string[]> };
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
  /** Stage name -> its code identity, worked out once per build (codeOf). */
  codes: Map<string, StageCode>;
}

/** A scope before any stage is keyed; the reply store loads when a stage first runs (a no-op needs none). */
export function newScope(
  rt: Runtime,
  opts: BuildOptions,
  cache: Cache,
  previous: LockSpec | undefined,
  emit: Emit = () => {},
): BuildScope {
  return {
    rt,
    opts,
    cache,
    upstream: new Map(),
    sources: new Map(),
    previous,
    newPins: {},
    emit,
    memo: null,
    codes: new Map(),
  };
}

/** The stage's code identity (src/runner/keys/stage-code.ts), worked out once per build: the build's check
 *  before any stage runs, its key, its stage line and its isolated run all take this one. */
export function codeOf(scope: BuildScope, decl: StageDecl): StageCode {
  let code = scope.codes.get(decl.name);
  if (!code) {
    const kind = scope.rt.kinds.get(decl.kind)!;
    code = stageCode(installRoot(), kind, decl.params as Json, scope.rt.task);
    scope.codes.set(decl.name, code);
  }
  return code;
}

/** Whether the stage runs its task code in a process of its own (./isolate.ts). */
export function stageRunsIsolated(rt: Runtime, decl: StageDecl): boolean {
  const kind = rt.kinds.get(decl.kind);
  return kind !== undefined && runsIsolated(kind, decl.params as Json, rt.task);
}

/** Whether `--refresh` names this stage (by its name or its kind). */
export const refreshed = (decl: StageDecl, opts: BuildOptions): boolean =>
  opts.refresh.includes(decl.name) || opts.refresh.includes(decl.kind);

/** The project as a walk keys its stages: its spec's files, each kind's own identity (a data stage's source
 *  noted for its readers), upstream outputs as the scope holds them. */
export function projectSource(scope: BuildScope): KeySource {
  return {
    order: scope.rt.plan.order,
    upstream: scope.upstream,
    context: (decl, temps) => stageContext(decl, scope, temps),
    code: (decl) => codeOf(scope, decl),
    fileHash: (decl, input, file) => inputFileHash(decl, input, file, scope),
    identity: async (decl, ctx) => {
      const kind = scope.rt.kinds.get(decl.kind)!;
      const identity = kind.identify ? await kind.identify(ctx!) : null;
      if (kind.dataSource) scope.sources.set(decl.name, kind.dataSource(ctx!));
      return identity;
    },
  };
}

/** The hash of a file input of the spec, which must exist inside the project. */
async function inputFileHash(
  decl: StageDecl,
  name: string,
  file: string,
  scope: BuildScope,
): Promise<string> {
  const spec = scope.rt.spec;
  const abs = insideDir(specFilesRoot(scope.opts.project, spec.path), file, "input file", spec.path);
  if (!existsSync(abs))
    throw new DiagnosticError([
      {
        file: spec.path,
        key: `stages.${decl.name}.inputs.${name}`,
        message: `input file ${file} does not exist`,
        fix: "create it or correct the path (relative to the project root)",
      },
    ]);
  return scope.cache.stat.hash(abs);
}

/**
 * The results folder's suffix: `.release` when the spec bundles a (synthetic) sample and this build read the
 * real release instead, so that neither result overwrites the other; then `.partial` for a partial run.
 */
export function resultsSuffix(scope: BuildScope): string {
  const real = [...scope.sources.values()].some((source) => source.hasSample && !source.sample);
  return (real ? ".release" : "") + scope.opts.resultsSuffix;
}

/** A partial run (`--limit`) of a task whose release is private: few private items, so no hash of them is
 *  published (neither medbench.lock nor build.json records its keys). */
export function privatePartial(rt: Runtime, opts: BuildOptions): boolean {
  return Boolean(opts.resultsSuffix && rt.task.module.privateRelease);
}

/** The stage's manifest (`manifest`, as the cache gave it for `key`) when it ran whole and every output it
 *  names is in the cache and intact (else it must run). */
export async function freshManifest(
  cache: Cache,
  key: string,
  manifest: StageManifest | null,
): Promise<StageManifest | null> {
  if (!manifest || manifest.key !== key || manifest.incomplete) return null;
  for (const hash of Object.values(manifest.outputs)) if (!(await cache.verify(hash))) return null;
  return manifest;
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

/** A file read whole as a stage input (a spec's template or schema, or its copy in a bundle). */
export function fileInputView(path: string): InputView {
  return {
    hashes: {},
    read: () => readFileSync(path),
    text: () => readFileSync(path, "utf8"),
    path: () => path,
  };
}

/** Where a spec file a stage reads is. */
export const specFilePath = (scope: BuildScope, file: string): string =>
  resolve(specFilesRoot(scope.opts.project, scope.rt.spec.path), file);

/** A spec file read as a stage input. */
function fileInput(scope: BuildScope, file: string): InputView {
  return fileInputView(specFilePath(scope, file));
}

/** An upstream stage's outputs read as a stage input (`name` of stage `decl`). */
function stageInput(scope: BuildScope, decl: StageDecl, name: string, from: string): InputView {
  const { upstream, cache } = scope;
  const hashOf = (out?: string): string => {
    const hashes = upstream.get(from) ?? {};
    // A named output is looked up, not found by listing the outputs: a release of 20,000 files is read
    // file by file, and listing its names on every read made reading it quadratic.
    if (out !== undefined && out in hashes) return hashes[out]!;
    const names = Object.keys(hashes);
    const chosen = out ?? (names.length === 1 ? names[0] : undefined);
    if (chosen === undefined || !(chosen in hashes))
      throw new StageError(
        `stage ${decl.name}: input ${name} has no output ${out ?? "(unnamed)"}; it has ${names.join(", ")}`,
      );
    return hashes[chosen]!;
  };
  return {
    get hashes() {
      return upstream.get(from) ?? {};
    },
    get source() {
      return scope.sources.get(from) ?? null;
    },
    read: (out) => cache.read(hashOf(out)),
    text: (out) => cache.read(hashOf(out)).toString("utf8"),
    path: (out) => cache.objectPath(hashOf(out)),
  };
}

function stageOptions(decl: StageDecl, scope: BuildScope): StageOptions {
  const { opts, rt } = scope;
  return {
    projectRoot: specFilesRoot(opts.project, rt.spec.path),
    dataDir: opts.dataDir,
    trustChanged: opts.trustChanged,
    refresh: refreshed(decl, opts),
    env: opts.env,
    routes: commandRoutes(opts.registryFiles),
    paceDir: join(opts.project.cacheDir, "pace"),
    ...(opts.shard ? { shard: opts.shard } : {}),
    ...(opts.budget ? { budget: opts.budget } : {}),
    ...(opts.batch ? { batch: opts.batch } : {}),
  };
}

/** The context a stage is keyed and run in; `temps` collects the temporary files it asks for. */
export function stageContext(decl: StageDecl, scope: BuildScope, temps: string[]): StageContext {
  const { rt, cache, emit, previous, newPins } = scope;
  const inputs: Record<string, InputView> = {};
  for (const [name, ref] of Object.entries(decl.inputs))
    inputs[name] = "file" in ref ? fileInput(scope, ref.file) : stageInput(scope, decl, name, ref.stage);
  return {
    stage: decl.name,
    build: rt.build,
    params: decl.params as Json,
    inputs,
    task: rt.task.module,
    options: stageOptions(decl, scope),
    memo: scope.memo ?? UNLOADED,
    pins: {
      recorded: (source, path) => newPins[source]?.[path] ?? previous?.pins[source]?.[path],
      record: (source, path, sha) => {
        (newPins[source] ??= {})[path] = sha;
      },
    },
    tempPath: () => {
      const temp = tempName(cache.tmp);
      temps.push(temp);
      return temp;
    },
    hashFile: (path) => cache.stat.hash(path),
    emit,
  };
}
