// A run's deviations from its spec: a field the model fixes (request.models `fixed`, with `deviate`) sent as
// the model takes it, or a thinking-off task sent at the model's lowest effort (`reasoning_low`). Decided
// per request before any protocol makes the body, so that every wire format sends the same thing, and each
// is recorded (the field, the spec's value, what was sent or that it was left out, the rule): never silent
// (docs/model-requests.md, "Deviations"). A field the spec marks `no_deviation` is refused as before.
import { sortedJson, type Json } from "../util/json.js";
import type { Deviation } from "../util/metrics.js";
import type { Route } from "./registry.js";
import { deviateMode, fixedFieldMessage, modelRule, thinkingOff } from "./model-rules.js";
import { UnsendableRequest, type BodyParams, type ChatRequest } from "./protocol.js";

export type { Deviation } from "../util/metrics.js";

/** The spec's fields a model stage may mark as not to be deviated from (its `no_deviation`). */
export const DEVIABLE_FIELDS = ["temperature", "top_p", "thinking"] as const;

export interface RuledParams extends BodyParams {
  /** Fields the route's rules may not change: a model that fixes one is refused, as without `deviate`. */
  no_deviation?: string[];
}

type Generation = NonNullable<ChatRequest["generation"]>;

/** The request and the stage's fields as this model is sent them, and how they differ from the spec's. */
export function ruledRequest<R extends ChatRequest>(
  req: R,
  params: RuledParams,
  route: Route,
  model: string,
): { req: R; params: BodyParams; deviations: Deviation[] } {
  const strict = new Set(params.no_deviation ?? []);
  const deviations: Deviation[] = [];
  const fields: Record<string, Json | undefined> = { ...params };
  let generation: Generation | undefined = req.generation;
  for (const [field, allowed] of Object.entries(modelRule(route, model)?.rule.fixed ?? {})) {
    const own = generation?.[field] !== undefined;
    const value = own ? generation![field] : fields[field];
    if (value === undefined || sortedJson(value) === sortedJson(allowed)) continue;
    const how = deviateMode(route, model, field);
    if (!how) continue; // the body's own check refuses it, naming the rule
    if (strict.has(field)) throw strictRefusal(route, model, { field, value, allowed }, req.configuration);
    const sent = how.mode === "omit" ? undefined : allowed;
    // Left out: from both places (a request's undefined field would let the stage's through).
    if (own) generation = { ...generation, [field]: sent };
    if (sent === undefined) delete fields[field];
    else if (!own) fields[field] = sent;
    const shown = sent === undefined ? { omitted: true as const } : { sent };
    deviations.push({ field, spec: value, ...shown, rule: how.rule });
  }
  const thinking = thinkingDeviation(params, route, model, strict.has("thinking"));
  if (thinking) deviations.push(thinking);
  const ruled = generation === req.generation ? req : { ...req, generation };
  return { req: ruled, params: fields as BodyParams, deviations };
}

/** A stage whose no_deviation names a field the model fixes to another value: refused, as without
 *  deviate. */
function strictRefusal(
  route: Route,
  model: string,
  { field, value, allowed }: { field: string; value: Json; allowed: Json },
  configuration: string | undefined,
): UnsendableRequest {
  const pattern = modelRule(route, model)!.pattern;
  const where = configuration ? ` (request configuration ${configuration})` : "";
  const message = fixedFieldMessage(route, model, { field, sent: value, allowed, pattern });
  return new UnsendableRequest(
    `${message}${where}; the stage's no_deviation names ${field}`,
    NO_DEVIATION_FIX,
  );
}

export const NO_DEVIATION_FIX =
  "remove the field from the stage's no_deviation (the run then sends what the model takes and records " +
  "the deviation), or run a model that takes the spec's value";

/** A thinking-off task sent at the model's lowest effort, which is no thinking off (null when it is not). */
function thinkingDeviation(
  params: BodyParams,
  route: Route,
  model: string,
  strict: boolean,
): Deviation | null {
  if (params.thinking !== "off") return null;
  // A per-model override's fields replace the route's thinking-off fields: the spec's own choice.
  if ((params.overrides?.[`${route.name}/${model}`] ?? params.overrides?.[model])?.fields) return null;
  const off = thinkingOff(route, model);
  if (off.kind !== "lowest") return null;
  if (strict) throw new UnsendableRequest(...thinkingStrict(route.name, model, off.rule));
  return { field: "thinking", spec: "off", sent: off.fields, rule: off.rule };
}

/** Why a stage whose no_deviation names thinking is refused for a model that cannot switch it off. */
export function thinkingStrict(route: string, model: string, rule: string): [string, string] {
  return [
    `model ${model} on route ${route} cannot switch thinking off: the route sends its lowest effort ` +
      `(${rule}), and the stage's no_deviation names thinking`,
    "run a model that can switch thinking off, or remove thinking from the stage's no_deviation " +
      "(the run then records the deviation)",
  ];
}

/** The deviations of a stage's requests, each once, with the configurations it applies to. */
export class DeviationLog {
  private readonly seen = new Map<string, { deviation: Deviation; configurations: Set<string> }>();

  add(deviations: Deviation[], configuration: string | undefined): void {
    for (const deviation of deviations) {
      const id = sortedJson(deviation as unknown as Json)!;
      let entry = this.seen.get(id);
      if (!entry) this.seen.set(id, (entry = { deviation, configurations: new Set() }));
      if (configuration !== undefined) entry.configurations.add(configuration);
    }
  }

  /** In a fixed order (field, then the entry's JSON), whatever order the requests came in. */
  list(): Deviation[] {
    return [...this.seen.entries()]
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([, { deviation, configurations }]) => ({
        ...deviation,
        ...(configurations.size ? { configurations: [...configurations].sort() } : {}),
      }));
  }
}
