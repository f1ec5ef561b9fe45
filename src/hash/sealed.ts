// The files medbench writes to read back later (derived caches): a first line holding the sha256 of the
// rest, so that a reader takes back exactly what was written or nothing. A hand edit, a cut-off write or a
// file of another version fails the check and is treated as absent (the reader derives the value again).
// The seal guards against accidents and careless edits, not against someone who recomputes it: whoever can
// write cache/ can also run medbench (docs/hardening.md, "What medbench checks before use").
import { readFileSync } from "../util/builtins.js";
import { sha256Hex } from "./sha256.js";

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

/**
 * The body of the sealed file `file`; null when it is absent, of an older format (no seal: re-derived in
 * silence) or edited since it was written (then `onEdited` is told why, and the caller derives it again).
 */
export function readSealed(file: string, onEdited: (why: string) => void): string | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  if (!text.startsWith(TAG)) return null;
  const opened = unseal(text);
  if ("body" in opened) return opened.body;
  onEdited(opened.problem);
  return null;
}

/** The warning a discarded derived cache gets (on stderr: no fault of the build; it costs a rehash). */
export function warnDiscarded(file: string, why: string, consequence: string): void {
  process.stderr.write(`warning: ${file} is discarded: ${why}; ${consequence}\n`);
}
