// The compiled stage-code function, stage kinds and a task module, loaded as the CLI loads them (CommonJS
// from dist/): a task's parts are checked against the modules its compiled index.js loaded.
import { createRequire } from "node:module";
import { join } from "node:path";
import type { stageCode as StageCodeFn } from "../../src/runner/keys/stage-code.js";
import type { StageKind } from "../../src/contract/stage.js";
import type { TaskModule } from "../../src/contract/task.js";
import { REPO } from "./helpers.js";

const load = createRequire(import.meta.url);

export function compiled(task: string): {
  stageCode: typeof StageCodeFn;
  kinds: ReadonlyMap<string, StageKind>;
  task: TaskModule;
} {
  const folder = task.includes("/") ? task : `tasks/${task}`;
  return {
    stageCode: (load(join(REPO, "dist/src/runner/keys/stage-code.js")) as { stageCode: typeof StageCodeFn })
      .stageCode,
    kinds: (load(join(REPO, "dist/stages/index.js")) as { STAGE_KINDS: ReadonlyMap<string, StageKind> })
      .STAGE_KINDS,
    task: (load(join(REPO, "dist", folder, "index.js")) as { task: TaskModule }).task,
  };
}
