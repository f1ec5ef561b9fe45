// What metrics.request records: the fields of the bodies actually sent, messages aside. Items of one run may
// be sent differently (a request configuration's own temperature, a lower response format after the server
// refused the schema), so the record keeps the fields every body shared and, beside them, the fields of each
// kind of body (docs/model-requests.md, "What metrics.request records").
import { bodyJson } from "./body-json.js";
import { withoutItemFields } from "./protocol.js";
import { sortedJson, type Json } from "../util/json.js";

interface Kind {
  fields: Record<string, Json>;
  configuration: string | null;
  format: string;
  items: number;
}

export class SentRequests {
  private readonly kinds = new Map<string, Kind>();

  /** `itemFields`: the body fields that carry an item's own text (the protocol's), left out. */
  constructor(private readonly itemFields: readonly string[] = ["messages"]) {}

  /** One item's body as sent (its final try), of its request configuration and response format. */
  add(body: Record<string, Json>, configuration: string | undefined, format: string): void {
    const fields = withoutItemFields(body, this.itemFields);
    const id = `${configuration ?? ""}\n${format}\n${bodyJson(fields)}`;
    const kind = this.kinds.get(id);
    if (kind) kind.items++;
    else this.kinds.set(id, { fields, configuration: configuration ?? null, format, items: 1 });
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
