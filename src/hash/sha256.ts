import { createHash, createReadStream } from "../util/builtins.js";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Streams a file through sha256 so a large release file is never held in memory. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export const SHA256_RE = /^[0-9a-f]{64}$/;
