// Per-model rules of a route (request.models in a registry file): what a model takes that others on the same
// route do not. OpenAI's reasoning models refuse max_tokens and any temperature but 1, and switch thinking
// off (or lower it) with their own reasoning_effort values; a rule says so once, and medbench sends what the
// model takes or refuses the stage before anything is sent.
import type { Json } from "../util/json.js";
import type { DeviateMode, ModelRule, Route } from "./registry.js";
import { UnsendableRequest } from "./protocol.js";

type Matched = { pattern: string; rule: ModelRule } | null;

/** The rule that applies to a model: the first pattern, in the order written, that matches its name. */
export function modelRule(route: Route, model: string): Matched {
  let byModel = matchedRules.get(route);
  if (!byModel) matchedRules.set(route, (byModel = new Map()));
  let matched = byModel.get(model);
  if (matched === undefined) byModel.set(model, (matched = firstMatch(route, model)));
  return matched;
}
// Each body asks three times (token field, thinking off, fixed fields): found once per route and model.
const matchedRules = new WeakMap<Route, Map<string, Matched>>();

function firstMatch(route: Route, model: string): Matched {
  for (const [pattern, rule] of Object.entries(route.request.models ?? {}))
    if (globMatches(pattern, model)) return { pattern, rule };
  return null;
}

/** A pattern matches the whole name; `*` stands for any run of characters. */
export function globMatches(pattern: string, name: string): boolean {
  const parts = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`).test(name);
}

/** The body field the spec's max_tokens is sent as: the model's rule, else the route's, else max_tokens. */
export function tokenField(route: Route, model: string): string {
  return modelRule(route, model)?.rule.token_field ?? route.request.token_field ?? "max_tokens";
}

/** How a thinking-off request is sent to this model. */
export type ThinkingOff =
  | { kind: "fields"; fields: Record<string, Json> }
  /** The model cannot switch thinking off: its lowest effort is sent instead (`rule` says which rule). */
  | { kind: "lowest"; fields: Record<string, Json>; rule: string }
  /** The route declares nothing: `lowest` says whether it was the lowest effort that was missing. */
  | { kind: "undeclared"; lowest: boolean }
  /** The model cannot run with thinking off or at a low effort, for `why`. */
  | { kind: "refused"; why: string; pattern: string };

export function thinkingOff(route: Route, model: string): ThinkingOff {
  const matched = modelRule(route, model);
  if (matched) {
    const { rule, pattern } = matched;
    if (rule.no_thinking_off !== undefined) return { kind: "refused", why: rule.no_thinking_off, pattern };
    if (rule.reasoning_low)
      return { kind: "lowest", fields: rule.reasoning_low, rule: `${route.name} ${pattern} reasoning_low` };
    if (rule.thinking_off) return { kind: "fields", fields: rule.thinking_off };
  }
  const low = (route.request.reasoning_low_models ?? []).find((pattern) => model.includes(pattern));
  const fields = low !== undefined ? route.request.reasoning_low : route.request.thinking_off;
  if (!fields) return { kind: "undeclared", lowest: low !== undefined };
  if (low === undefined) return { kind: "fields", fields };
  return { kind: "lowest", fields, rule: `${route.name} reasoning_low_models ${low}` };
}

/** A field of a body the model takes only at another value. */
export interface FixedFieldProblem {
  field: string;
  sent: Json;
  allowed: Json;
  pattern: string;
}

/** The fields of `body` whose value the model's rule fixes to another value (`fixed`). */
export function fixedFieldProblems(
  route: Route,
  model: string,
  body: Record<string, Json>,
): FixedFieldProblem[] {
  const matched = modelRule(route, model);
  if (!matched?.rule.fixed) return [];
  const out: FixedFieldProblem[] = [];
  for (const [field, allowed] of Object.entries(matched.rule.fixed))
    if (field in body && JSON.stringify(body[field]) !== JSON.stringify(allowed))
      out.push({ field, sent: body[field]!, allowed, pattern: matched.pattern });
  return out;
}

/** How the model's rule sends a spec's other value of a fixed field (null: it does not: refused). */
export function deviateMode(
  route: Route,
  model: string,
  field: string,
): { mode: DeviateMode; rule: string } | null {
  const matched = modelRule(route, model);
  const deviate = matched?.rule.deviate;
  if (deviate === undefined || !(field in (matched!.rule.fixed ?? {}))) return null;
  const mode = typeof deviate === "string" ? deviate : deviate[field];
  return mode ? { mode, rule: `${route.name} ${matched!.pattern} deviate` } : null;
}

/** The sentence that names the field, the model and the rule. */
export function fixedFieldMessage(route: Route, model: string, x: FixedFieldProblem): string {
  return (
    `model ${model} on route ${route.name} takes ${x.field} only at ${JSON.stringify(x.allowed)} ` +
    `(the route's request.models "${x.pattern}".fixed), and this stage would send ` +
    `${x.field} ${JSON.stringify(x.sent)}`
  );
}

/**
 * The fields a thinking-off request sends to this model, by the route's rules. A model that cannot switch
 * thinking off, and a route that declares nothing, throw UnsendableRequest; `undeclared` says the latter in
 * the protocol's own terms (`lowest`: it was the lowest effort that was missing).
 */
export function thinkingOffFields(
  route: Route,
  model: string,
  undeclared: (lowest: boolean) => { message: string; fix: string },
): Record<string, Json> {
  const off = thinkingOff(route, model);
  if (off.kind === "fields" || off.kind === "lowest") return off.fields;
  const { message, fix } =
    off.kind === "refused" ? thinkingOffRefusal(route.name, model, off) : undeclared(off.lowest);
  throw new UnsendableRequest(message, fix);
}

/** Why a model that cannot switch thinking off refuses a thinking-off task, and the fix (check and run). */
export function thinkingOffRefusal(
  routeName: string,
  model: string,
  off: { why: string; pattern: string },
): { message: string; fix: string } {
  return {
    message:
      `model ${model} on route ${routeName} cannot run a task with thinking off: ${off.why} ` +
      `(the route's request.models "${off.pattern}")`,
    fix: "run a model that can switch thinking off, or one the route gives a lowest effort (reasoning_low)",
  };
}

export const FIXED_FIELD_FIX =
  "leave the field out of the spec's request for this model (or set it to the value the model takes), or " +
  "run a model that takes it; a route whose request.models rule has deviate (omit or send_fixed) sends " +
  "such a model what it takes and records the deviation (--registry FILE)";
