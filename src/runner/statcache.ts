// size + mtime + inode -> sha256, so a no-op build does not rehash a large release file (DVC's lesson).
import { statSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { sha256File } from "../hash/sha256.js";
import { writeFileAtomic } from "./fsutil.js";

interface Entry {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

export class StatCache {
  private entries: Record<string, Entry> = {};
  private dirty = false;

  constructor(
    private readonly file: string,
    private readonly tmpDir: string,
  ) {
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as {
        version?: number;
        entries?: Record<string, Entry>;
      };
      if (parsed.version === 1 && parsed.entries) this.entries = parsed.entries;
    } catch {
      // a missing or damaged stat cache only costs a rehash
    }
  }

  async hash(path: string): Promise<string> {
    const abs = resolve(path);
    const st = statSync(abs);
    const hit = this.entries[abs];
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs && hit.ino === st.ino) return hit.sha256;
    const sha256 = await sha256File(abs);
    // A file modified within the clock's resolution could change again unseen: do not trust its stat yet.
    if (Date.now() - st.mtimeMs > 2000) {
      this.entries[abs] = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, sha256 };
      this.dirty = true;
    }
    return sha256;
  }

  /** Records a file whose hash is known because we wrote it (cache objects: immutable once in place). */
  remember(path: string, sha256: string): void {
    const abs = resolve(path);
    const st = statSync(abs);
    this.entries[abs] = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, sha256 };
    this.dirty = true;
  }

  save(): void {
    if (!this.dirty) return;
    const sorted = Object.fromEntries(Object.entries(this.entries).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileAtomic(this.file, JSON.stringify({ version: 1, entries: sorted }), this.tmpDir);
    this.dirty = false;
  }
}
