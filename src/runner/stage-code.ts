// The code a stage's key holds: its kind's compiled module and what it loads (never infrastructure), plus,
// per task part the stage calls, the module declared for it and what that loads (or, for a part the task
// does not declare, the whole task folder), with the exact versions of the packages all of it loads.
import { codeIdentity, isInfrastructure, taskDataFiles, taskFolderEntries } from "./code.js";
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
  task: { name: string; module: TaskModule },
): StageCode {
  const entries = [`dist/stages/${kind.kind}.js`];
  const calls = task.name !== "" && kind.taskParts ? kind.taskParts(params, task.module) : [];
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
