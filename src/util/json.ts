// Deterministic JSON for files we write: sorted keys, so equal data gives equal bytes.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The value with object keys sorted (undefined members left out), for JSON.stringify. What is already
 *  so (a plain object whose keys are sorted and defined, an array of such) is returned as it is, not
 *  copied: records read back from sorted JSON lines are hashed and written again without a copy. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const s = sortKeys(v);
      if (out) out.push(s);
      else if (s !== v) (out = value.slice(0, i)).push(s);
    }
    return out ?? value;
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    const kids: unknown[] = new Array(keys.length);
    const proto = Object.getPrototypeOf(value) as unknown;
    let same = proto === Object.prototype || proto === null; // a Date or a Buffer becomes a plain copy
    for (let i = 0; i < keys.length; i++) {
      const v = (value as Record<string, unknown>)[keys[i]!];
      const s = v === undefined ? undefined : sortKeys(v);
      kids[i] = s;
      if (s !== v || v === undefined || (i > 0 && !(keys[i - 1]! < keys[i]!))) same = false;
    }
    if (same) return value;
    const order = keys.map((_, i) => i).sort((x, y) => (keys[x]! < keys[y]! ? -1 : 1));
    const out: Record<string, unknown> = {};
    for (const i of order) if (kids[i] !== undefined) out[keys[i]!] = kids[i];
    return out;
  }
  return value;
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
  return rows.map((r) => JSON.stringify(sortKeys(r))).join("\n") + (rows.length ? "\n" : "");
}

export function parseJsonLines<T = unknown>(text: string): T[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
}

/** JSON-pointer paths of every leaf that differs between a and b. */
export function jsonDiff(a: unknown, b: unknown, path = ""): { path: string; from: unknown; to: unknown }[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => jsonDiff(a[k], b[k], `${path}/${escapePointer(k)}`));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((x, i) => jsonDiff(x, b[i], `${path}/${i}`));
  }
  if (JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))) return [];
  return [{ path: path || "/", from: a, to: b }];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A JSON pointer as dotted words for messages: /files/a~1b.txt -> files.a/b.txt */
export function pointerWords(pointer: string): string {
  return pointer
    .slice(1)
    .split("/")
    .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

export function escapePointer(k: string): string {
  return k.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function unreachable(x: never): never {
  throw new Error(`unreachable: ${JSON.stringify(x)}`);
}
