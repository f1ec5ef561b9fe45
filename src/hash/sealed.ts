// The files medbench writes to read back later (derived caches): a first line holding the sha256 of the
// rest, so that a reader takes back exactly what was written or nothing. A hand edit, a cut-off write or a
// file of another version fails the check and is treated as absent (the reader derives the value again).
// The seal guards against accidents and careless edits, not against someone who recomputes it: whoever can
// write cache/ can also run medbench (docs/hardening.md, "What medbench checks before use").
import { closeSync, createHash, openSync, readSync } from "../util/builtins.js";
import { StringDecoder } from "node:string_decoder";
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
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  let opened: ReturnType<typeof unsealFrom>;
  try {
    opened = unsealFrom(fd);
  } catch {
    return null; // unreadable (a folder, a read error): absent
  } finally {
    closeSync(fd);
  }
  if (opened === null || "body" in opened) return opened?.body ?? null;
  onEdited(opened.problem);
  return null;
}

/** Bytes read at a time. A whole file read or hashed at once (a code memo is about 400 KB) is a C
 *  allocation that size, given back to the system when freed, which makes glibc keep every later
 *  allocation below that size resident: a first build read the 370 KB seed of its code memo whole and
 *  peaked 5 MB higher (docs/performance.md, "Peak memory of a first build"). */
const READ_CHUNK = 1 << 16;

/** unseal() of the open file's text, read and hashed a chunk at a time; null for a text that does not
 *  start with the seal's tag. */
function unsealFrom(fd: number): ReturnType<typeof unseal> | null {
  const chunk = Buffer.allocUnsafe(READ_CHUNK);
  const hash = createHash("sha256");
  const decoder = new StringDecoder("utf8");
  const parts: string[] = [];
  let head = ""; // the seal's line, until its end is read
  let seal: string | null = null;
  for (let size; (size = readSync(fd, chunk, 0, READ_CHUNK, null)) > 0; ) {
    let bytes = chunk.subarray(0, size);
    if (seal === null) {
      const nl = bytes.indexOf(10);
      head += decoder.write(nl < 0 ? bytes : bytes.subarray(0, nl));
      if (!TAG.startsWith(head.slice(0, TAG.length))) return null;
      if (nl < 0) continue;
      head += decoder.end();
      seal = head.slice(TAG.length);
      bytes = bytes.subarray(nl + 1);
    }
    hash.update(bytes);
    parts.push(decoder.write(bytes));
  }
  if (!head.startsWith(TAG)) return null;
  if (seal === null) return { problem: "it has no seal (not written by this medbench)" };
  parts.push(decoder.end());
  return seal === hash.digest("hex")
    ? { body: parts.join("") }
    : { problem: "its content does not match its seal (edited or damaged since medbench wrote it)" };
}

/** The warning a discarded derived cache gets (on stderr: no fault of the build; it costs a rehash). */
export function warnDiscarded(file: string, why: string, consequence: string): void {
  process.stderr.write(`warning: ${file} is discarded: ${why}; ${consequence}\n`);
}
