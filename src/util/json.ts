// Deterministic JSON for files we write: sorted keys, so equal data gives equal bytes.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The value with object keys sorted (undefined members left out), for JSON.stringify. What is already
 *  so (a plain object whose keys are sorted and defined, an array of such) is returned as it is, not
 *  copied: records read back from sorted JSON lines are hashed and written again without a copy. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const sorted = sortKeys(item);
      if (out) out.push(sorted);
      else if (sorted !== item) (out = value.slice(0, i)).push(sorted);
    }
    return out ?? value;
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    const kids: unknown[] = new Array(keys.length);
    const proto = Object.getPrototypeOf(value) as unknown;
    let same = proto === Object.prototype || proto === null; // a Date or a Buffer becomes a plain copy
    for (let i = 0; i < keys.length; i++) {
      const member = (value as Record<string, unknown>)[keys[i]!];
      const sorted = member === undefined ? undefined : sortKeys(member);
      kids[i] = sorted;
      if (sorted !== member || member === undefined || (i > 0 && !(keys[i - 1]! < keys[i]!))) same = false;
    }
    if (same) return value;
    const order = sortedOrder(keys);
    const out: Record<string, unknown> = {};
    for (const i of order) if (kids[i] !== undefined) out[keys[i]!] = kids[i];
    return out;
  }
  return value;
}

/** The indices of `keys` in code-unit order of the keys. A record's dozen keys are sorted in place: sort()
 *  copies them into a work area, which for every record written was a first build's largest allocation. */
function sortedOrder(keys: string[]): number[] {
  const order = keys.map((_key, i) => i);
  if (keys.length > 32) return order.sort((left, right) => (keys[left]! < keys[right]! ? -1 : 1));
  for (let i = 1; i < order.length; i++) {
    const index = order[i]!;
    let at = i;
    for (; at > 0 && keys[order[at - 1]!]! > keys[index]!; at--) order[at] = order[at - 1]!;
    order[at] = index;
  }
  return order;
}

/** JSON.stringify(sortKeys(value)): the bytes keys hash and JSON lines hold. */
export function sortedJson(value: unknown): string | undefined {
  return JSON.stringify(sortKeys(value));
}

export function stableJson(value: unknown, indent = 2): string {
  return JSON.stringify(sortKeys(value), null, indent) + "\n";
}

/** One JSON value per line, keys sorted. */
export function jsonLines(rows: unknown[]): string {
  return rows.map((row) => JSON.stringify(sortKeys(row))).join("\n") + (rows.length ? "\n" : "");
}

export function parseJsonLines<T = unknown>(text: string): T[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** JSON-pointer paths of every leaf that differs between a and b. */
export function jsonDiff(
  before: unknown,
  after: unknown,
  path = "",
): { path: string; from: unknown; to: unknown }[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => jsonDiff(before[key], after[key], `${path}/${escapePointer(key)}`));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((x, i) => jsonDiff(x, after[i], `${path}/${i}`));
  }
  if (JSON.stringify(sortKeys(before)) === JSON.stringify(sortKeys(after))) return [];
  return [{ path: path || "/", from: before, to: after }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A JSON pointer as dotted words for messages: /files/a~1b.txt -> files.a/b.txt */
export function pointerWords(pointer: string): string {
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

export function escapePointer(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function unreachable(x: never): never {
  throw new Error(`unreachable: ${JSON.stringify(x)}`);
}
