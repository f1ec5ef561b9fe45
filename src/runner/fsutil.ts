import { mkdirSync, renameSync, writeFileSync, rmSync, openSync, closeSync, fsyncSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

/** Writes a file so that a reader sees the old content or the new one, never a half: temp file + rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array, tmpDir = dirname(path)): void {
  mkdirSync(tmpDir, { recursive: true });
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(tmpDir, `.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  try {
    writeFileSync(tmp, data);
    const fd = openSync(tmp, "r");
    try { fsyncSync(fd); } finally { closeSync(fd); }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export function tempName(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return join(dir, `.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
}
