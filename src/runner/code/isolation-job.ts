// What medbench sends an isolated stage's process (src/runner/code/isolated-host.ts) and what it sends back.
import type { BuildEvent } from "../../contract/events.js";
import type { BuildInfo, StageOutput } from "../../contract/stage.js";
import type { TaskPart } from "../../contract/task.js";
import type { Json } from "../../util/json.js";
import type { GuardOptions } from "./task-guard.js";

/** Stands for a function of the task object in its declarations (functions do not travel). */
export const FUNCTION_MARK = "\u0000function";

/** One part's module (absolute path) and, per task member it binds, the name it is exported under. */
export interface IsolatedBinding {
  part: TaskPart;
  module: string;
  exports: Record<string, string>;
}

export interface IsolatedTask {
  /** The task object with every function replaced by FUNCTION_MARK. */
  declared: Json;
  modules: IsolatedBinding[];
  /** The task's compiled index.js when a part the stage calls is keyed on the whole task folder. */
  whole: string | null;
  guard: GuardOptions;
}

export interface IsolatedInput {
  hashes: Record<string, string>;
  /** Output name -> the file of its cache object. */
  paths: Record<string, string>;
  /** A file input of the spec: its path. */
  file?: string;
  source?: Json;
}

export interface IsolatedJob {
  /** The stage's key: the seed of its random draws. */
  key: string;
  /** The stage kind (the process was started with its module and name, and checks it). */
  kind: string;
  stage: string;
  build: BuildInfo;
  params: Json;
  inputs: Record<string, IsolatedInput>;
  options: { projectRoot: string; dataDir?: string; trustChanged: boolean; refresh: boolean };
  /** The declared variables the key holds, with their values. */
  env: Record<string, string>;
  /** The folder the stage writes its outputs in. */
  tmp: string;
  task: IsolatedTask | null;
}

export type HostMessage =
  | { type: "emit"; event: BuildEvent }
  | { type: "incomplete"; reason: string }
  | { type: "done"; outputs: Record<string, StageOutput> }
  | { type: "failed"; message: string; fix?: string; known: boolean; reads: string[] };
