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

const NO_SEAL = "it has no seal (not written by this medbench)";
const NOT_MATCHING = "its content does not match its seal (edited or damaged since medbench wrote it)";

type Unsealed = { body: string } | { problem: string };

/** The body of a sealed text, or why it is not one that was written whole by medbench. */
export function unseal(text: string): Unsealed {
  const nl = text.indexOf("\n");
  if (!text.startsWith(TAG) || nl < 0) return { problem: NO_SEAL };
  const body = text.slice(nl + 1);
  return text.slice(TAG.length, nl) === sha256Hex(body) ? { body } : { problem: NOT_MATCHING };
}

/**
 * The body of the sealed file `file`; null when it is absent, of an older format (no seal: re-derived in
 * silence) or edited since it was written (then `onEdited` is told why, and the caller derives it again).
 * The seal is checked against the bytes of the file, as sealed() wrote them.
 */
export function readSealed(file: string, onEdited: (why: string) => void): string | null {
  let opened: Unsealed | null;
  try {
    const fd = openSync(file, "r");
    try {
      opened = unsealFrom(new ChunkReader(fd));
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    if (typeof (e as NodeJS.ErrnoException).code === "string") return null; // unreadable: absent
    throw e;
  }
  if (opened === null) return null;
  if ("body" in opened) return opened.body;
  onEdited(opened.problem);
  return null;
}

/** Bytes read at a time. A whole file read or hashed at once (a code memo is about 400 KB) is a C
 *  allocation that size, given back to the system when freed, which makes glibc keep every later
 *  allocation below that size resident: a first build read the 370 KB seed of its code memo whole and
 *  peaked 5 MB higher (docs/performance.md, "Peak memory of a first build"). */
const READ_CHUNK = 1 << 16;

/** A file's bytes, a chunk at a time through one buffer (each chunk valid until the next is read). */
class ChunkReader {
  private readonly buffer = Buffer.allocUnsafe(READ_CHUNK);
  constructor(private readonly fd: number) {}
  next(): Buffer | null {
    const size = readSync(this.fd, this.buffer, 0, READ_CHUNK, null);
    return size > 0 ? this.buffer.subarray(0, size) : null;
  }
}

/** unseal() of the file's text; null for a text that does not start with the seal's tag. */
function unsealFrom(reader: ChunkReader): Unsealed | null {
  const line = sealLine(reader);
  if (line === null) return null;
  if (line.seal === null) return { problem: NO_SEAL };
  const hash = createHash("sha256");
  const decoder = new StringDecoder("utf8");
  const parts: string[] = [];
  for (let bytes: Buffer | null = line.rest; bytes; bytes = reader.next()) {
    hash.update(bytes);
    parts.push(decoder.write(bytes));
  }
  parts.push(decoder.end());
  return line.seal === hash.digest("hex") ? { body: parts.join("") } : { problem: NOT_MATCHING };
}

/** The seal the first line holds (null: the tag and no line's end) and the bytes read after it (valid until
 *  the next read); null when the text does not start with the tag, found as soon as a chunk says so. */
function sealLine(reader: ChunkReader): { seal: string | null; rest: Buffer | null } | null {
  let head = "";
  for (let bytes = reader.next(); bytes; bytes = reader.next()) {
    const nl = bytes.indexOf(10);
    // The tag is ASCII: a byte beyond it is never part of a tag that matches.
    head += bytes.toString("latin1", 0, nl < 0 ? bytes.length : nl);
    if (!TAG.startsWith(head.slice(0, TAG.length))) return null;
    if (nl >= 0) {
      if (!head.startsWith(TAG)) return null;
      return { seal: head.slice(TAG.length), rest: bytes.subarray(nl + 1) };
    }
  }
  return head.startsWith(TAG) ? { seal: null, rest: null } : null;
}

/** The warning a discarded derived cache gets (on stderr: no fault of the build; it costs a rehash). */
export function warnDiscarded(file: string, why: string, consequence: string): void {
  process.stderr.write(`warning: ${file} is discarded: ${why}; ${consequence}\n`);
}
