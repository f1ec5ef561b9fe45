// A task's built-in model by name (route `medbench`), for the model and fit stages: its own module, so that
// the fit stage's key holds no model-stage code (no registry, no HTTP client).
import { StageError } from "../src/errors.js";
import type { Baseline, TaskModule, TaskPart } from "../src/contract/task.js";
import type { Json } from "../src/util/json.js";

/** The task part a model or fit stage calls: its model's, when that is a built-in one (route medbench). */
export function builtinParts(params: Json): TaskPart[] {
  const model = (params as { model?: unknown } | null)?.model;
  return typeof model === "string" && model.startsWith("medbench/") ? [`baseline ${model}`] : [];
}

/** The task's built-in model of this name (route `medbench`), or a refusal that lists them. */
export function builtinBaseline(task: TaskModule, model: string): Baseline {
  const baseline = task.baselines[model];
  if (!baseline)
    throw new StageError(
      `no built-in model ${model} for this task`,
      `use one of: ${Object.keys(task.baselines).join(", ")}, or a route of the registry`,
    );
  return baseline;
}
