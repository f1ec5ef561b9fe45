// What metrics.request records: the fields of the bodies actually sent, messages aside. Items of one run may
// be sent differently (a request configuration's own temperature, a lower response format after the server
// refused the schema), so the record keeps the fields every body shared and, beside them, the fields of each
// kind of body (docs/model-requests.md, "What metrics.request records").
import { sortedJsonText } from "../util/sorted-json.js";
import { withoutItemFields } from "./protocol.js";
import { sortedJson, type Json } from "../util/json.js";

interface Kind {
  fields: Record<string, Json>;
  /** How many fields it has. */
  size: number;
  configuration: string | null;
  format: string;
  items: number;
}

export class SentRequests {
  private readonly kinds = new Map<string, Kind>();
  // The kind each configuration and format last went as: most bodies are of it, found without their JSON
  // (made per body, it was the stage's largest allocation after the bodies themselves).
  private readonly lastKinds = new Map<string, Kind>();

  /** `itemFields`: the body fields that carry an item's own text (the protocol's), left out. */
  constructor(private readonly itemFields: readonly string[] = ["messages"]) {}

  /** One item's body as sent (its final try), of its request configuration and response format. */
  add(body: Record<string, Json>, configuration: string | undefined, format: string): void {
    const pair = `${configuration ?? ""}\n${format}`;
    const last = this.lastKinds.get(pair);
    if (last && sameFields(last, body, this.itemFields)) {
      last.items++;
      return;
    }
    const fields = withoutItemFields(body, this.itemFields);
    const id = `${pair}\n${sortedJsonText(fields)}`;
    let kind = this.kinds.get(id);
    if (!kind) this.kinds.set(id, (kind = newKind(fields, configuration ?? null, format)));
    kind.items++;
    this.lastKinds.set(pair, kind);
  }

  /** The fields of every body sent; with several kinds of body, the shared ones and each kind's own, under
   *  `variants` by label (its configuration and/or format), with its number of items. Null when none. */
  record(): Record<string, Json> | null {
    // In the order of their ids, not of arrival, so that concurrency never changes the record.
    const kinds = [...this.kinds.entries()]
      .sort(([left], [right]) => (left < right ? -1 : 1))
      .map(([, kind]) => kind);
    if (kinds.length === 0) return null;
    if (kinds.length === 1) return { ...kinds[0]!.fields };
    const shared = sharedFields(kinds.map((kindOfRequest) => kindOfRequest.fields));
    const variants: Record<string, Json> = {};
    for (const [label, kind] of labelled(kinds)) {
      const own = Object.entries(kind.fields).filter(([field]) => !(field in shared));
      variants[label] = { items: kind.items, fields: Object.fromEntries(own) };
    }
    return { ...shared, variants };
  }
}

const newKind = (fields: Record<string, Json>, configuration: string | null, format: string): Kind => ({
  fields,
  size: Object.keys(fields).length,
  configuration,
  format,
  items: 0,
});

/** Whether `body`'s fields but its item fields are `fields`, member for member: then their JSON is the same
 *  (false says nothing: the JSON decides). */
function sameFields({ fields, size }: Kind, body: Record<string, Json>, itemFields: readonly string[]) {
  let count = 0;
  for (const field in body) {
    if (itemFields.includes(field)) continue;
    if (
      !Object.hasOwn(body, field) ||
      !Object.hasOwn(fields, field) ||
      !sameJson(fields[field], body[field])
    )
      return false;
    count++;
  }
  return count === size;
}

/** Plain values equal member for member (the same object, or plain objects and arrays of equal members). */
function sameJson(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (!isPlainData(left) || !isPlainData(right) || Array.isArray(left) !== Array.isArray(right))
    return false;
  if (Array.isArray(left)) {
    const other = right as unknown[];
    if (left.length !== other.length) return false;
    for (let i = 0; i < left.length; i++)
      if (i in left !== i in other || !sameJson(left[i], other[i])) return false; // holes too
    return true;
  }
  let members = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key) || !Object.hasOwn(right, key)) return false;
    if (!sameJson((left as Fields)[key], (right as Fields)[key])) return false;
    members++;
  }
  for (const _key in right) members--;
  return members === 0;
}
type Fields = Record<string, unknown>;

/** An array, or an object JSON writes member by member (no toJSON, a plain prototype). */
function isPlainData(value: unknown): value is object {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (value as Fields).toJSON !== "function";
}

/** The fields present in every body with the same value. */
function sharedFields(bodies: Record<string, Json>[]): Record<string, Json> {
  const [first, ...rest] = bodies;
  const out: Record<string, Json> = {};
  for (const [field, value] of Object.entries(first!)) {
    const json = sortedJson(value);
    if (rest.every((other) => field in other && sortedJson(other[field]) === json)) out[field] = value;
  }
  return out;
}

/** Each kind by a label that tells it apart: its configuration when the run has several, its format when
 *  items went with several, and a number when those two are not enough (a task's per-request fields). */
function labelled(kinds: Kind[]): [string, Kind][] {
  const several = (values: string[]) => new Set(values).size > 1;
  const byConfiguration = several(kinds.map((kindOfRequest) => kindOfRequest.configuration ?? ""));
  const byFormat = several(kinds.map((kindOfRequest) => kindOfRequest.format));
  const seen = new Map<string, number>();
  return kinds.map((kind) => {
    const parts = [
      ...(byConfiguration ? [kind.configuration ?? "(none)"] : []),
      ...(byFormat ? [kind.format] : []),
    ];
    const base = parts.join(" ") || "body";
    const seenCount = (seen.get(base) ?? 0) + 1;
    seen.set(base, seenCount);
    return [seenCount === 1 ? base : `${base} #${seenCount}`, kind];
  });
}
