// Every stage kind by name. Kinds are generic: none of them knows a task's name.
import type { StageKind } from "../src/contract/stage.js";
import { download } from "./download.js";
import { prompts } from "./prompts.js";
import { modelStage } from "./model.js";
import { parse } from "./parse.js";
import { score } from "./score.js";
import { bootstrap } from "./bootstrap.js";
import { judge } from "./judge.js";
import { fit } from "./fit.js";

export const STAGE_KINDS: ReadonlyMap<string, StageKind> = new Map(
  [download, prompts, fit, modelStage, parse, judge, score, bootstrap].map((stage) => [stage.kind, stage]),
);
