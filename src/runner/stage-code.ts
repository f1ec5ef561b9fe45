// The code a stage's key holds: its kind's compiled module and what it loads (never infrastructure), plus,
// per task part the stage calls, the module declared for it and what that loads (or, for a part the task
// does not declare, the whole task folder), with the exact versions of the packages all of it loads.
import {
  codeIdentity,
  isInfrastructure,
  taskDataFiles,
  taskFolderEntries,
  userTaskIdentity,
} from "./code.js";
import type { UserTask } from "./user-task.js";
import { taskBindings } from "./task-parts.js";
import type { StageKind } from "./stage.js";
import type { TaskModule } from "../contract/task.js";
import type { Json } from "../util/json.js";

export interface StageCode {
  code: Record<string, string>;
  packages: Record<string, string>;
  /** Per task part called: where its value comes from (PartBinding), or "whole task folder"; and the task
   *  declarations the kind reads (taskData). Null when the stage calls no task code. */
  task: Json;
}

/** Said of a part the task does not declare: its stage is keyed on every file of the task folder. */
export const WHOLE_FOLDER = "whole task folder";

export function stageCode(
  root: string,
  kind: StageKind,
  params: Json,
  task: { name: string; module: TaskModule; user?: UserTask | null },
): StageCode {
  const entries = [`dist/stages/${kind.kind}.js`];
  const calls = task.name !== "" && kind.taskParts ? kind.taskParts(params, task.module) : [];
  if (task.user) return userStageCode(root, kind, task, calls);
  const parts: Record<string, Json> = {};
  if (calls.length) {
    const bound = taskBindings(root, task.name, task.module).parts;
    let whole = false;
    for (const part of calls) {
      const b = bound.get(part);
      if (b) entries.push(b.module);
      else whole = true;
      parts[part] = b ? { module: b.module, exports: b.exports } : WHOLE_FOLDER;
    }
    entries.push(...(whole ? taskFolderEntries(root, task.name) : taskDataFiles(root, task.name)));
  }
  const data = task.name !== "" && kind.taskData ? kind.taskData(task.module) : null;
  const { files, packages } = codeIdentity(root, entries, isInfrastructure);
  return {
    code: files,
    packages,
    task: calls.length || data !== null ? { parts, ...(data !== null ? { declared: data } : {}) } : null,
  };
}

/** A task of the user's repository (src/runner/user-task.ts): a stage that calls any of its parts is keyed on
 *  the whole task (its compiled modules, data files, packages and compiler); parts are not told apart yet. */
function userStageCode(
  root: string,
  kind: StageKind,
  task: { module: TaskModule; user?: UserTask | null },
  calls: string[],
): StageCode {
  const own = codeIdentity(root, [`dist/stages/${kind.kind}.js`], isInfrastructure);
  const user = calls.length ? userTaskIdentity(task.user!) : { files: {}, packages: {} };
  const data = kind.taskData ? kind.taskData(task.module) : null;
  const parts = Object.fromEntries(calls.map((p) => [p, WHOLE_USER_TASK]));
  return {
    code: { ...own.files, ...user.files },
    packages: { ...own.packages, ...user.packages },
    task: calls.length || data !== null ? { parts, ...(data !== null ? { declared: data } : {}) } : null,
  };
}

/** Said of every part a stage calls of a task in the user's repository. */
export const WHOLE_USER_TASK = "whole task folder of the repository";
