// Sorted-key JSON made in one pass: the same bytes as sortedJson (./json.ts), without a sorted copy of the
// value. A request body's (the bytes its key hashes and the bytes sent), with what many bodies share
// serialised once: a part the stage fixes (a task's schema) and the long strings that recur (a system
// prompt): serialising each ~3 KB body afresh took a tenth of the model stage's time. And a records file's
// lines (src/contract/records.ts): a sorted copy of each record, then its JSON, took 36 against 24 ms for
// 2,070 requests in a fresh process (docs/performance.md, "Task code isolated").
import { sortedJson } from "./json.js";

const fixedJson = new WeakMap<object, string>();

/** A deep-frozen copy of `value`, whose JSON is then made once for every body it is part of. */
export function fixedPart<T>(value: T): T {
  const json = sortedJson(value);
  if (json === undefined) return value;
  const copy = deepFreeze(JSON.parse(json) as unknown);
  if (copy !== null && typeof copy === "object") fixedJson.set(copy, json);
  return copy as T;
}

function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === "object") {
    for (const x of Object.values(value)) deepFreeze(x);
    Object.freeze(value);
  }
  return value;
}

// Strings at least this long have their JSON kept (strings cannot change), up to this many characters in
// all (a few MB at most, held with the strings themselves); the kept ones are dropped together when the
// limit is reached, so unique long prompts (an MTSamples note each) cost little but their lookups.
const LONG = 256;
const KEEP_CHARS = 1 << 20;
const jsonOfLong = new Map<string, string>();
let keptChars = 0;

function stringJson(text: string): string {
  if (text.length < LONG) return JSON.stringify(text);
  let json = jsonOfLong.get(text);
  if (json === undefined) {
    json = JSON.stringify(text);
    if (keptChars + text.length > KEEP_CHARS) {
      jsonOfLong.clear();
      keptChars = 0;
    }
    jsonOfLong.set(text, json);
    keptChars += text.length;
  }
  return json;
}

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function"
  );
};

/** A key an object keeps as an array index (a canonical integer below 2^32 - 1). */
function isIndex(key: string): boolean {
  const code = key.charCodeAt(0);
  return code >= 48 && code <= 57 && /^(?:0|[1-9][0-9]{0,9})$/.test(key) && Number(key) < 4294967295;
}

/** A member JSON.stringify leaves out of an object (and writes as null in an array). */
const skipped = (value: unknown): boolean =>
  value === undefined || typeof value === "function" || typeof value === "symbol";

/** `keys` from `from` on in code-unit order, as sort() puts them. A body's few keys (a message's role and
 *  content) are sorted in place: sort() copies them into a work area, each body's and message's. */
function sortFrom(keys: string[], from: number): void {
  if (keys.length - from > 16) {
    for (const key of keys.splice(from).sort()) keys.push(key);
    return;
  }
  for (let i = from + 1; i < keys.length; i++) {
    const key = keys[i]!;
    let at = i;
    for (; at > from && keys[at - 1]! > key; at--) keys[at] = keys[at - 1]!;
    keys[at] = key;
  }
}

/** sortedJson(value), byte for byte. */
export function sortedJsonText(value: unknown): string | undefined {
  if (skipped(value)) return sortedJson(value);
  return json(value);
}

function json(value: unknown): string {
  if (typeof value === "string") return stringJson(value);
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const fixed = fixedJson.get(value);
  if (fixed !== undefined) return fixed;
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const x: unknown = value[i];
      out += (i === 0 ? "" : ",") + (skipped(x) ? "null" : json(x));
    }
    return out + "]";
  }
  // A Date, a Buffer or an object with toJSON: as sortedJson makes it (rare in a body; never in a task's).
  if (!isPlain(value)) return sortedJson(value)!;
  const keys = Object.keys(value);
  // The order sortedJson's sorted copy has: the engine puts array-index keys first, in numeric order (as
  // Object.keys gives them here too), then the others as inserted, sorted.
  let from = 0;
  while (from < keys.length && isIndex(keys[from]!)) from++;
  for (let i = from + 1; i < keys.length; i++)
    if (!(keys[i - 1]! < keys[i]!)) {
      sortFrom(keys, from);
      break;
    }
  let out = "{";
  for (const key of keys) {
    const x = (value as Record<string, unknown>)[key];
    if (skipped(x)) continue;
    out += (out.length === 1 ? "" : ",") + JSON.stringify(key) + ":" + json(x);
  }
  return out + "}";
}
