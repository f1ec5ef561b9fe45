// The contract between the runner and a stage kind. A stage sees its inputs and parameters,
// a task module and a memo store; it never sees the cache, the lock or the console.
import type { Json } from "../util/json.js";
import type { BuildEvent } from "./events.js";
import type { TaskModule, TaskPart } from "./task.js";
import type { KindDeclarations } from "./declarations.js";
import type { Shard } from "../remote/shard.js";
import type { Routes } from "../model/routes.js";
import type { Budget, SendEstimate } from "../model/budget.js";

/** A stage output: bytes, or a finished file (hashed while written) that the runner moves into the store. */
export type StageOutput = string | Uint8Array | { file: string; sha256: string };

export interface InputView {
  /** Output name -> sha256, for a stage input; { file: sha256 } for a file input. */
  hashes: Record<string, string>;
  read(name?: string): Buffer;
  text(name?: string): string;
  /** An on-disk path for the output (for large files read by streaming). */
  path(name?: string): string;
  /** For the outputs of a data stage: where they came from (the release, or the spec's bundled sample). */
  readonly source?: DataSource | null;
}

/** Where a data stage's files came from: `sample` when they are the spec's bundled (synthetic) sample. */
export interface DataSource {
  label: string;
  sample: boolean;
  /** The spec bundles a sample (so a result of the real release needs a folder of its own). */
  hasSample: boolean;
}

export interface PinStore {
  /** sha256 recorded in medbench.lock for a file trusted on first use, by source and path. */
  recorded(source: string, path: string): string | undefined;
  record(source: string, path: string, sha256: string): void;
}

/** Key-value blobs that outlive a stage run (the model stage's per-request replies). */
export interface MemoStore {
  /** Local entries come at once; one read from the shared remote cache is awaited. */
  get(namespace: string, key: string): Buffer | null | Promise<Buffer | null>;
  /** Returns once the entry is in place (whole, or absent after a crash). */
  put(namespace: string, key: string, data: string | Uint8Array): void;
  /** Once the entries put so far are in the shared remote too (a record another machine must find even if
   *  this build is killed next: a batch's id). */
  settled?(): Promise<void>;
  /** Before a request this process claimed is sent again: the reply another machine stored meanwhile, when
   *  its claim passed its deadline and was taken over (src/remote/claims.ts), else null (send it). */
  recheck?(namespace: string, key: string): Promise<Buffer | null>;
}

export interface StageOptions {
  /** What the spec's file paths are relative to (runner/project/project.ts specFilesRoot). */
  projectRoot: string;
  dataDir?: string;
  trustChanged: boolean;
  refresh: boolean; // this stage was named by --refresh
  env: Record<string, string | undefined>;
  routes: Routes;
  /** --shard I/N: a model stage sends only this machine's share of its requests (the rest: other shards). */
  shard?: Shard;
  /** The folder of the pace ledgers a machine's builds share per route (the cache's pace/). */
  paceDir?: string;
  /** Memo namespace of model replies: "requests" for builds; verify --live keeps its replies apart. */
  replyNamespace?: string;
  /** --max-cost: what the build's model and judge stages may spend, shared by them (src/model/budget.ts). */
  budget?: Budget;
  /** build --batch: the model and judge stages send their requests as provider batches; `wait`: they poll
   *  until the batches are done (else they submit, and a later build collects). */
  batch?: { on: boolean; wait: boolean };
}

export interface BuildInfo {
  slug: string;
  version: number;
  specHash: string;
  medbench: string;
  recipe: number;
  variables: Record<string, Json>;
}

export interface StageContext {
  stage: string;
  build: BuildInfo;
  params: Json;
  inputs: Record<string, InputView>;
  task: TaskModule;
  options: StageOptions;
  pins: PinStore;
  memo: MemoStore;
  /** A fresh temp path inside the cache's file system, removed if the stage fails. */
  tempPath(): string;
  hashFile(path: string): Promise<string>;
  emit(event: BuildEvent): void;
  /** The outputs are not whole (requests failed): they are kept and used, but the stage is never fresh, so
   *  the next build runs it again (and sends only what has no reply yet). */
  incomplete?(reason: string): void;
}

/** A stage kind declares its inputs, outputs and parameters (KindDeclarations); a task adds its own
 *  parameters for the kinds that pass params on to it. The spec is checked against both before running. */
export interface StageKind extends KindDeclarations {
  kind: string;
  /** Checks beyond the declarations that need the task or the build's options (a baseline's own parameters,
   *  a model's route), before anything runs. */
  check?(stage: StageShape, task: TaskModule, env: CheckEnv | null): StageProblem[];
  /** The task parts a stage of this kind calls with these parameters (src/runner/code/task-parts.ts): the
   * code each reaches is in its key. Defined for a kind that needs a task, even where it calls none. */
  taskParts?(params: Json, task: TaskModule): TaskPart[];
  /** Whether a stage of this kind with these parameters sends requests to a model's server: its task code
   *  then runs in medbench's process, not isolated (docs/records.md, "Task code runs isolated"). */
  sendsRequests?(params: Json): boolean;
  /** The task's declarations (not code) that shape this kind's outputs, keyed as values. */
  taskData?(task: TaskModule): Json;
  /**
   * What a result bundle does with this kind's outputs (default: verify recomputes them). `data`: they are
   * the release, never bundled; `reads-data`: taken from the bundle (recomputing needs the data); `model`:
   * taken from the bundle, re-sent only by verify --live.
   */
  inBundle?: "data" | "reads-data" | "model";
  /**
   * For a bundle that withholds an input this kind reads (a private release): its outputs again from its
   * own bundled outputs and the inputs it still has (`input(name, output)`), or null when it cannot.
   */
  replayWithheld?(replay: {
    task: TaskModule;
    own: Record<string, string>;
    input(name: string, output: string): string | undefined;
    params: Json;
  }): Record<string, string> | null;
  /** Extra key material worked out before deciding freshness (a download's content hashes). */
  identify?(ctx: StageContext): Promise<Json>;
  /** A data stage's source, worked out with its key (its readers see it as `source` of their input). */
  dataSource?(ctx: StageContext): DataSource;
  run(ctx: StageContext): Promise<Record<string, StageOutput>>;
  /** Loads modules its run would load on its way, while medbench's process waits on a stage of a process
   *  of its own (src/load/ahead.ts): the load off the build's wall time. Loads only; changes no result. */
  ahead?(): void;
  /** What running the stage would send, per model, without sending anything (`status`): a model stage's
   *  requests that have no reply yet. */
  estimate?(ctx: StageContext): Promise<Record<string, SendEstimate>>;
}

/** A stage as the spec declares it (inputs by name, resolved parameters). */
export interface StageShape {
  name: string;
  inputs: Record<string, { stage: string } | { file: string }>;
  params: Json;
}

/** What a spec check may consult besides the spec and the task: the build's route registries (--registry).
 *  null for a command that sends nothing (status, report, check, compare): no route is needed. */
export interface CheckEnv {
  routes: Routes;
}

/** A problem with a stage's declaration: a pointer below the stage (e.g. /params/baseline/C). */
export interface StageProblem {
  pointer: string;
  message: string;
  fix: string;
  /** Text the message leaves out (a password): hidden in the quoted source line too. */
  secret?: string;
}
