// Deterministic JSON for files we write: sorted keys, so equal data gives equal bytes.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
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
