import { closeSync, createHash, openSync, readSync, sha256Once } from "../util/builtins.js";

export function sha256Hex(data: string | Uint8Array): string {
  return sha256Once(data);
}

/** Bytes read at a time from a file hashed whole (1 MiB). */
const FILE_CHUNK = 1 << 20;

/** Reads a file a chunk at a time through sha256, so that a large release file is never held in memory;
 *  `each` sees every chunk (a view, valid only during the call). Synchronous: a read stream loaded fs's
 *  stream modules and took a turn of the event loop for every 64 KB (docs/performance.md). */
export function sha256FileSync(path: string, each?: (chunk: Buffer) => void): string {
  const hash = createHash("sha256");
  const buffer = takeChunkBuffer();
  const fd = openSync(path, "r");
  try {
    for (let read; (read = readSync(fd, buffer, 0, FILE_CHUNK, null)) > 0; ) {
      const chunk = buffer.subarray(0, read);
      hash.update(chunk);
      each?.(chunk);
    }
  } finally {
    closeSync(fd);
    spare = buffer;
  }
  return hash.digest("hex");
}

// One chunk buffer kept for the next file: a new one per file left a megabyte of garbage outside V8's heap
// each (a first build's download, 14 files: 11 MB of array buffers until the next collection).
let spare: Buffer | undefined;
function takeChunkBuffer(): Buffer {
  const buffer = spare ?? Buffer.allocUnsafe(FILE_CHUNK);
  spare = undefined; // a hash started from `each` takes a buffer of its own
  return buffer;
}

export const SHA256_RE = /^[0-9a-f]{64}$/;
