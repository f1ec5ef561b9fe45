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
 * around them (keyedPayload).
 */
export function serialisedRequest(route: Route, body: Json): { payload: Buffer; key: string } {
  const json = sortedJsonText(body)!;
  const model = (body as { model?: unknown }).model;
  if (typeof model !== "string" || typeof route.base_url !== "string") {
    const payload = Buffer.from(json, "utf8");
    return { payload, key: sha256Hex(sortedJson({ base_url: route.base_url, model, body })!) };
  }
  return keyedPayload(route.base_url, model, json);
}

/** What a key's JSON holds around a body's: `{"base_url":…,"body":` and `,"model":…}`. */
const keyAround = (baseUrl: string, model: string): [string, string] => [
  `{"base_url":${JSON.stringify(baseUrl)},"body":`,
  `,"model":${JSON.stringify(model)}}`,
];

/** A body's sorted-key JSON as sent, and its key: sha256 of sortedJson({ base_url, body, model }), which is
 *  these bytes with the route and model around them (every protocol's key, so that they cannot drift
 *  apart). The three are encoded into one buffer and hashed in one call; the body sent is a view of it. */
export function keyedPayload(
  baseUrl: string,
  model: string,
  json: string,
): { payload: Buffer; key: string } {
  const [head, tail] = keyAround(baseUrl, model);
  const whole = Buffer.from(head + json + tail, "utf8");
  const payload = whole.subarray(Buffer.byteLength(head), whole.length - Buffer.byteLength(tail));
  return { payload, key: sha256Once(whole) };
}
