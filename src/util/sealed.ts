// The files medbench writes to read back later (derived caches): a first line holding the sha256 of the rest,
// so that a reader takes back exactly what was written or nothing. A hand edit, a cut-off write or a file of
// another version fails the check and is treated as absent (the reader derives the value again). The seal
// guards against accidents and careless edits, not against someone who recomputes it: whoever can write
// cache/ can also run medbench (docs/hardening.md, issue 25.2).
import { sha256Hex } from "../hash/sha256.js";

const TAG = "medbench-sealed sha256:";

/** `body` with its seal line in front. */
export function sealed(body: string): string {
  return `${TAG}${sha256Hex(body)}\n${body}`;
}

/** The body of a sealed text, or why it is not one that was written whole by medbench. */
export function unseal(text: string): { body: string } | { problem: string } {
  const nl = text.indexOf("\n");
  if (!text.startsWith(TAG) || nl < 0) return { problem: "it has no seal (not written by this medbench)" };
  const body = text.slice(nl + 1);
  return text.slice(TAG.length, nl) === sha256Hex(body)
    ? { body }
    : { problem: "its content does not match its seal (edited or damaged since medbench wrote it)" };
}
