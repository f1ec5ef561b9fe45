// A model stage checked against its route's per-model rules (request.models) with the spec, before anything
// runs: a field the model takes only at another value (temperature 0 to a reasoning model) that the rule
// does not deviate from, or that the stage marks no_deviation, or a thinking-off task on a model that cannot
// run one, is a problem at the place the spec writes it.
import { splitModel } from "../src/model/registry.js";
import { NO_DEVIATION_FIX, thinkingStrict } from "../src/model/deviations.js";
import {
  FIXED_FIELD_FIX,
  deviateMode,
  fixedFieldMessage,
  fixedFieldProblems,
  thinkingOff,
  thinkingOffRefusal,
} from "../src/model/model-rules.js";
import { escapePointer, type Json } from "../src/util/json.js";
import type { CheckEnv, StageProblem } from "../src/contract/stage.js";

interface RuledParams {
  model?: Json;
  no_deviation?: Json[];
  temperature?: Json;
  top_p?: Json;
  thinking?: Json;
  overrides?: Record<string, { fields?: Record<string, Json> } | null>;
}

/** The stage's fields its route's rule for the model refuses, each at its pointer below the stage. */
export function modelRuleProblems(params: Json, env: CheckEnv): StageProblem[] {
  const ruled = (params ?? {}) as RuledParams;
  if (typeof ruled.model !== "string" || !/^[^/\s]+\/\S+$/.test(ruled.model)) return [];
  const { route: name, model } = splitModel(ruled.model);
  const route = env.routes.get(name);
  if (!route) return []; // the route's own problem
  const out: StageProblem[] = [];
  const strict = new Set(Array.isArray(ruled.no_deviation) ? ruled.no_deviation : []);
  const off = ruled.thinking === "off" ? thinkingOff(route, model) : null;
  if (off?.kind === "refused")
    out.push({ pointer: "/params/thinking", ...thinkingOffRefusal(name, model, off) });
  const overridden = ruled.overrides?.[`${name}/${model}`]?.fields ?? ruled.overrides?.[model]?.fields;
  if (off?.kind === "lowest" && strict.has("thinking") && !overridden) {
    const [message, fix] = thinkingStrict(name, model, off.rule);
    out.push({ pointer: "/params/thinking", message, fix });
  }
  for (const [field, { value, pointer, own }] of sentFields(ruled, name, model))
    for (const x of fixedFieldProblems(route, model, { [field]: value })) {
      // The stage's own field is sent as the rule's deviate says (a recorded deviation), unless the stage
      // marks it no_deviation; an override's field is the spec's explicit choice for this model.
      const deviates = own && deviateMode(route, model, field) !== null;
      if (deviates && !strict.has(field)) continue;
      const why = deviates ? `; the stage's no_deviation names ${field}` : "";
      const fix = deviates ? NO_DEVIATION_FIX : FIXED_FIELD_FIX;
      out.push({ pointer, message: fixedFieldMessage(route, model, x) + why, fix });
    }
  return out;
}

/** The generation fields the stage sends, each with where it is written (an override's replaces the
 *  stage's). */
function sentFields(
  ruled: RuledParams,
  route: string,
  model: string,
): Map<string, { value: Json; pointer: string; own: boolean }> {
  const out = new Map<string, { value: Json; pointer: string; own: boolean }>();
  for (const field of ["temperature", "top_p"] as const)
    if (ruled[field] !== undefined)
      out.set(field, { value: ruled[field]!, pointer: `/params/${field}`, own: true });
  const key = ruled.overrides?.[`${route}/${model}`] ? `${route}/${model}` : model;
  for (const [field, value] of Object.entries(ruled.overrides?.[key]?.fields ?? {}))
    out.set(field, {
      value,
      pointer: `/params/overrides/${escapePointer(key)}/fields/${escapePointer(field)}`,
      own: false,
    });
  return out;
}
