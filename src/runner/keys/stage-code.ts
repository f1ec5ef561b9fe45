// The code a stage's key holds: its kind's compiled module and what it loads (never infrastructure), plus,
// per task part the stage calls, the module declared for it and what that loads (or, for a part the task
// does not declare, every compiled module of the task folder), with the packages all of it loads, and the
// values of the environment variables the task declares.
import {
  codeIdentity,
  filesUnder,
  isInfrastructure,
  reachedFiles,
  taskFolderModules,
  userTaskIdentity,
} from "../code/code.js";
import { sha256Hex } from "../../hash/sha256.js";
import { consultEnv } from "../../util/consulted.js";
import type { UserTask } from "../code/user-task.js";
import { taskBindings } from "../code/task-parts.js";
import type { TaskPart } from "../../contract/task.js";
import { join, resolve } from "node:path";
import { taskFolder } from "../../contract/task-folder.js";
import type { StageKind } from "../../contract/stage.js";
import type { TaskModule } from "../../contract/task.js";
import type { Json } from "../../util/json.js";

/** The task a stage calls; `reads`: per source of its folder, the variables it reads (task-rules.ts). */
interface TaskOfStage {
  name: string;
  module: TaskModule;
  user?: UserTask | null;
  reads?: Record<string, string[]>;
}

export interface StageCode {
  code: Record<string, string>;
  packages: Record<string, string>;
  /** Per task part called: where its value comes from (PartBinding), or "whole task folder"; and the task
   *  declarations the kind reads (taskData). Null when the stage calls no task code. */
  task: Json;
}

/** Said of a part the task does not declare: its stage is keyed on every module of the task folder. */
export const WHOLE_FOLDER = "whole task folder";

/** The module an isolated stage's process starts from: it runs the task's code, so it is in the key. */
export const HOST_MODULE = "dist/src/runner/code/isolated-host.js";

/** The task parts a stage of `kind` with `params` calls (none when the spec names no task). */
export const partsCalled = (kind: StageKind, params: Json, task: TaskOfStage): TaskPart[] =>
  task.name !== "" && kind.taskParts ? kind.taskParts(params, task.module) : [];

/** A stage that calls task code runs isolated (src/runner/code/isolation.ts), unless it also sends requests
 *  to a model's server (a judge stage: its task code runs in medbench's process, under the source rules). */
export const runsIsolated = (kind: StageKind, params: Json, task: TaskOfStage): boolean =>
  partsCalled(kind, params, task).length > 0 && !kind.sendsRequests?.(params);

/** The compiled modules a stage of `kind` starts from (its kind's, and the isolated host's when it has
 *  one). */
function kindEntries(kind: StageKind, params: Json, task: TaskOfStage): string[] {
  const own = `dist/stages/${kind.kind}.js`;
  return runsIsolated(kind, params, task) ? [own, HOST_MODULE] : [own];
}

export function stageCode(root: string, kind: StageKind, params: Json, task: TaskOfStage): StageCode {
  const entries = kindEntries(kind, params, task);
  const calls = partsCalled(kind, params, task);
  if (task.user) return userStageCode(root, kind, task, calls, entries);
  const parts: Record<string, Json> = {};
  if (calls.length) {
    const bound = taskBindings(root, task.name, task.module).parts;
    let whole = false;
    for (const part of calls) {
      const binding = bound.get(part);
      if (binding) entries.push(binding.module);
      else whole = true;
      parts[part] = binding ? { module: binding.module, exports: binding.exports } : WHOLE_FOLDER;
    }
    if (whole) entries.push(...taskFolderModules(root, task.name));
  }
  const data = task.name !== "" && kind.taskData ? kind.taskData(task.module) : null;
  const { files, packages } = codeIdentity(root, entries, isInfrastructure);
  const env = calls.length ? environmentOf(task, files, `dist/${taskFolder(task.name)}/`) : null;
  return { code: files, packages, task: taskRecord(parts, env, data) };
}

/** The task's share of a key: the parts called, the variables its code reads (null: it runs none) and the
 *  declarations the kind reads; null when the stage calls no task code. */
function taskRecord(
  parts: Record<string, Json>,
  env: Record<string, string | null> | null,
  data: Json,
): Json {
  if (env === null && data === null) return null;
  return {
    parts,
    ...(env && Object.keys(env).length ? { environment: env } : {}),
    ...(data !== null ? { declared: data } : {}),
  };
}

/**
 * The declared variables read by the task sources whose compiled modules the stage's code holds (`files`,
 * those of the task named `prefix`…), and by index.ts (its values reach the task object), each by name and
 * the sha256 of its value (null when unset): a value can be a secret, and a key record is written to the
 * cache. Without the sources' reads (a replay), every declared variable.
 */
function environmentOf(
  task: TaskOfStage,
  files: Record<string, string>,
  prefix: string,
): Record<string, string | null> {
  const declared = [...(task.module.environment ?? [])];
  let names = declared;
  if (task.reads) {
    const reached = Object.keys(files)
      .filter((file) => file.startsWith(prefix))
      .map((file) => file.slice(prefix.length).replace(/\.js$/, ".ts"));
    const read = new Set(["index.ts", ...reached].flatMap((file) => task.reads![file] ?? []));
    names = declared.filter((name) => read.has(name));
  }
  const out: Record<string, string | null> = {};
  for (const name of names.sort()) {
    const value = consultEnv(name);
    out[name] = value === null ? null : sha256Hex(value);
  }
  return out;
}

/**
 * A task of the user's repository (src/runner/code/user-task.ts), keyed as an installed task is: per part
 * the stage calls, the compiled module declared for it and what that imports (under the project's
 * cache/compiled), or, for a part the task does not declare, every compiled module of the task; the packages
 * they load and the compiler's version.
 */
function userStageCode(
  root: string,
  kind: StageKind,
  task: TaskOfStage,
  calls: TaskPart[],
  entries: string[],
): StageCode {
  const user = task.user!;
  const own = codeIdentity(root, entries, isInfrastructure);
  const parts: Record<string, Json> = {};
  const modules: string[] = [];
  let whole = false;
  if (calls.length) {
    const bound = taskBindings(user.compiledRoot, task.name, task.module, join("tasks", task.name)).parts;
    for (const part of calls) {
      const binding = bound.get(part);
      if (binding) modules.push(binding.module);
      else whole = true;
      parts[part] = binding
        ? { module: `project:${binding.module}`, exports: binding.exports }
        : WHOLE_USER_TASK;
    }
  }
  const code = calls.length
    ? userTaskIdentity(user, whole ? undefined : modules)
    : { files: {}, packages: {} };
  const data = kind.taskData ? kind.taskData(task.module) : null;
  return {
    code: { ...own.files, ...code.files },
    packages: { ...own.packages, ...code.packages },
    task: taskRecord(
      parts,
      calls.length ? environmentOf(task, code.files, `project:tasks/${task.name}/`) : null,
      data,
    ),
  };
}

/** Said of a part a task of the user's repository does not declare: every compiled module of the task. */
export const WHOLE_USER_TASK = "whole task folder of the repository";

/** What an isolated stage's process loads and reads as code: its entries, the part modules (absolute), or
 *  the task's index.js when a part is keyed on the whole folder; and the declared variables its key
 *  holds. */
export interface IsolatedCode {
  files: string[];
  modules: { part: TaskPart; module: string; exports: Record<string, string> }[];
  whole: string | null;
  env: string[];
}

/** `keyed`: the task record of the stage's key (StageCode.task), whose variables the process is given. */
export function isolatedCode(
  root: string,
  kind: StageKind,
  params: Json,
  task: TaskOfStage,
  keyed: Json,
): IsolatedCode {
  const calls = partsCalled(kind, params, task);
  const user = task.user;
  const base = user ? user.compiledRoot : root;
  const bound = user
    ? taskBindings(user.compiledRoot, task.name, task.module, join("tasks", task.name)).parts
    : taskBindings(root, task.name, task.module).parts;
  const folder = user ? user.compiled : join(root, "dist", taskFolder(task.name));
  const modules: IsolatedCode["modules"] = [];
  let whole = false;
  for (const part of calls) {
    const binding = bound.get(part);
    if (binding) modules.push({ part, module: resolve(base, binding.module), exports: binding.exports });
    else whole = true;
  }
  const entries = [
    ...kindEntries(kind, params, task).map((rel) => resolve(root, rel)),
    ...modules.map((binding) => binding.module),
    ...(whole ? filesUnder(folder).filter((file) => file.endsWith(".js")) : []),
  ];
  const record = keyed as { environment?: Record<string, unknown> } | null;
  return {
    files: reachedFiles(entries),
    modules,
    whole: whole ? join(folder, "index.js") : null,
    env: Object.keys(record?.environment ?? {}),
  };
}
