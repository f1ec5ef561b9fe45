// What every protocol's body is made with: a route's fields laid over a body, a task's schema sorted and
// frozen once, and a body's bytes and request key. The key is sha256 of
// sortedJson({ base_url, body, model }), so a changed body is a new request, whatever the protocol.
import type { Json } from "../util/json.js";
import { sortKeys, sortedJson } from "../util/json.js";
import { sortedJsonText, fixedPart } from "../util/sorted-json.js";
import { sha256Hex } from "../hash/sha256.js";
import { sha256Once } from "../util/builtins.js";
import type { Route } from "./registry.js";

export type Fields = Record<string, Json>;

/** The fields of `extra` laid over `base`, objects merged field by field. */
export function deepMerge(base: Fields, extra: Fields): Fields {
  if (isEmpty(extra)) return base; // most routes add nothing: no copy of every body
  const out: Fields = { ...base };
  for (const [field, value] of Object.entries(extra)) {
    const prev = out[field];
    out[field] = isObj(prev) && isObj(value) ? deepMerge(prev, value) : value;
  }
  return out;
}
const isObj = (value: unknown): value is Fields =>
  value !== null && typeof value === "object" && !Array.isArray(value);
function isEmpty(fields: object): boolean {
  for (const _field in fields) return false;
  return true;
}

// A task's schema is one object shared by all its requests (records keep it once): its sorted, frozen copy
// is made once, and its JSON with it, not by the serialisation of every body. Same JSON, so the same bytes
// and keys.
const sortedSchemas = new WeakMap<object, Json>();
export function sortedSchema(schema: Json): Json {
  if (schema === null || typeof schema !== "object") return schema;
  let sorted = sortedSchemas.get(schema);
  if (sorted === undefined) sortedSchemas.set(schema, (sorted = fixedPart(sortKeys(schema) as Json)));
  return sorted;
}

/** The per-request key: route identity (base URL), model and the exact body, as sorted-key JSON. */
export function requestKey(route: Route, body: Json): string {
  return serialisedRequest(route, body).key;
}

/**
 * The body as sent (sorted-key JSON, serialised and encoded once) and its key, hashed from the same bytes:
 * the key is sha256 of sortedJson({ base_url, body, model }), which is these bytes with the route and model
 * around them. The three are encoded into one buffer and hashed in one call; the body sent is a view of it.
 */
export function serialisedRequest(route: Route, body: Json): { payload: Buffer; key: string } {
  const json = sortedJsonText(body)!;
  const model = (body as { model?: unknown }).model;
  if (typeof model !== "string" || typeof route.base_url !== "string") {
    const payload = Buffer.from(json, "utf8");
    return { payload, key: sha256Hex(sortedJson({ base_url: route.base_url, model, body })!) };
  }
  const [head, tail] = keyAround(route.base_url, model);
  const whole = Buffer.from(head + json + tail, "utf8");
  const start = Buffer.byteLength(head);
  const payload = whole.subarray(start, whole.length - Buffer.byteLength(tail));
  return { payload, key: sha256Once(whole) };
}

/** What a key's JSON holds around a body's: `{"base_url":…,"body":` and `,"model":…}`. */
const keyAround = (baseUrl: string, model: string): [string, string] => [
  `{"base_url":${JSON.stringify(baseUrl)},"body":`,
  `,"model":${JSON.stringify(model)}}`,
];

/** sha256 of sortedJson({ base_url, body, model }), hashed from the body's own sorted-key bytes (every
 *  protocol's key, so that they cannot drift apart). */
export function payloadKey(baseUrl: string, model: string, payload: Buffer): string {
  const [head, tail] = keyAround(baseUrl, model);
  return sha256Once(Buffer.concat([Buffer.from(head, "utf8"), payload, Buffer.from(tail, "utf8")]));
}
