// spec_hash exactly as medbench.kr computes it (docs/reference/spec-hash.md).
import { pyDumps, type PyValue } from "../hash/pyjson.js";
import { sha256Hex } from "../hash/sha256.js";
import { setMember } from "../hash/python-json.js";

const PRESENTATION_KEYS = new Set(["title", "preview", "visibility"]);

/**
 * The version of every recipe that derives a key or hash; recorded in the lock, changed only by migration.
 */
export const HASH_RECIPE = 2;

export function specHash(spec: PyValue): string {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec))
    throw new Error("a spec must be an object");
  const stripped: { [key: string]: PyValue } = {};
  for (const [key, field] of Object.entries(spec))
    if (!PRESENTATION_KEYS.has(key)) setMember(stripped, key, field);
  return sha256Hex(Buffer.from(pyDumps(stripped), "utf8"));
}
