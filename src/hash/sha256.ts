import { closeSync, createHash, openSync, readSync } from "../util/builtins.js";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Bytes read at a time from a file hashed whole (1 MiB). */
const FILE_CHUNK = 1 << 20;

/** Reads a file a chunk at a time through sha256, so that a large release file is never held in memory;
 *  `each` sees every chunk (a view, valid only during the call). Synchronous: a read stream loaded fs's
 *  stream modules and took a turn of the event loop for every 64 KB (docs/performance.md). */
export function sha256FileSync(path: string, each?: (chunk: Buffer) => void): string {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(FILE_CHUNK);
  const fd = openSync(path, "r");
  try {
    for (let read; (read = readSync(fd, buffer, 0, FILE_CHUNK, null)) > 0; ) {
      const chunk = buffer.subarray(0, read);
      hash.update(chunk);
      each?.(chunk);
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

export async function sha256File(path: string): Promise<string> {
  return sha256FileSync(path);
}

export const SHA256_RE = /^[0-9a-f]{64}$/;
