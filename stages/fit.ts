// fit: trains a learning built-in baseline once (e.g. a logistic regression on the train split), cached by
// its release, parameters and seed. For any other model it records that there is nothing to fit, so one spec
// serves every model: the model stage reads `fitted` only for a baseline that learns.
import type { StageKind } from "../src/contract/stage.js";
import { builtinBaseline, builtinParts } from "./baseline.js";
import { stableJson, type Json } from "../src/util/json.js";
import { releaseFiles } from "./release.js";

interface Params {
  model: string;
  seed?: number;
  baseline?: Record<string, Json>;
}

export const fit: StageKind = {
  kind: "fit",
  inputs: { release: { release: true, description: "the release the baseline learns from" } },
  outputs: { fit: "fit" },
  params: {
    model: {
      type: "string",
      pattern: "^[^/\\s]+/\\S+$",
      description: "ROUTE/MODEL (only medbench/ learns)",
    },
    seed: { type: "integer", minimum: 0, description: "the baseline's seed" },
    baseline: { type: "object", description: "the baseline's parameters (as the model stage's)" },
  },
  required: ["model"],
  taskParts: (params) => builtinParts(params),
  async run(ctx) {
    const settings = ctx.params as unknown as Params;
    const baseline = settings.model.startsWith("medbench/")
      ? builtinBaseline(ctx.task, settings.model)
      : undefined;
    const record = {
      baseline: settings.model,
      params: settings.baseline ?? {},
      seed: settings.seed ?? 0,
      model: baseline?.fit
        ? baseline.fit({
            release: releaseFiles(ctx.inputs.release),
            params: settings.baseline ?? {},
            seed: settings.seed ?? 0,
          })
        : null,
    };
    return { fit: stableJson(record) };
  },
};
