// size + mtime + ctime + inode -> sha256, so a no-op build does not rehash a large release file (DVC's
// lesson). The ctime is what a writer cannot set: a file edited with its mtime put back (touch -r, cp -p
// onto it) has a new ctime, so it is hashed again and its damage seen.
import { statSync } from "../../util/builtins.js";
import type { Stats } from "node:fs";
import { resolve } from "node:path";
import { sha256FileSync } from "../../hash/sha256.js";
import { writeFileAtomic } from "../../util/fsutil.js";
import { sameSignature, settled, signatureOf, type StatSignature } from "../../util/stat-signature.js";
import { consult } from "../../util/consulted.js";
import { readSealed, sealed, warnDiscarded } from "../../hash/sealed.js";

const VERSION = 2;
const DISCARDED = "every file it named is hashed again";

interface Entry extends StatSignature {
  sha256: string;
}

export class StatCache {
  private entries: Record<string, Entry> = {};
  private dirty = false;

  constructor(
    private readonly file: string,
    private readonly tmpDir: string,
  ) {
    // Sealed (src/hash/sealed.ts): an edited hash would be believed for its file, so an edited stat cache
    // is dropped whole. A missing or damaged one only costs a rehash.
    const body = readSealed(file, (why) => warnDiscarded(file, why, DISCARDED));
    try {
      const parsed = JSON.parse(body ?? "null") as {
        version?: number;
        entries?: Record<string, Entry>;
      } | null;
      // Version 1 had no ctime: its entries are dropped (one rehash).
      if (parsed?.version === VERSION && parsed.entries) this.entries = parsed.entries;
    } catch {
      // sealed but not JSON: only costs a rehash
    }
  }

  async hash(path: string): Promise<string> {
    const abs = resolve(path);
    const st = statSync(abs);
    consult(abs, st);
    const hit = this.entries[abs];
    if (hit && sameSignature(hit, st)) return hit.sha256;
    const sha256 = sha256FileSync(abs);
    if (settled(st)) {
      this.entries[abs] = { ...signatureOf(st), sha256 };
      this.dirty = true;
    }
    return sha256;
  }

  /** A file medbench linked and unlinked again (an isolated stage's inbox): its link count alone changed,
   *  which moved its ctime. An entry that held as it was linked (`before`) takes its new signature, so
   *  that the next build does not hash it again; a file changed otherwise keeps the entry, which no longer
   *  holds. */
  relinked(path: string, before: Stats): void {
    const abs = resolve(path);
    const hit = this.entries[abs];
    const st = statSync(abs, { throwIfNoEntry: false });
    if (!hit || !st || !sameSignature(hit, before)) return;
    if (st.size !== before.size || st.mtimeMs !== before.mtimeMs || st.ino !== before.ino) return;
    this.entries[abs] = { ...signatureOf(st), sha256: hit.sha256 };
    this.dirty = true;
  }

  /** Records a file whose hash is known because we wrote it (cache objects: immutable once in place). */
  remember(path: string, sha256: string): void {
    const abs = resolve(path);
    const st = statSync(abs);
    this.entries[abs] = { ...signatureOf(st), sha256 };
    this.dirty = true;
  }

  save(): void {
    if (!this.dirty) return;
    const sorted = Object.fromEntries(
      Object.entries(this.entries).sort(([left], [right]) => (left < right ? -1 : 1)),
    );
    try {
      // Whole or absent, but not synced: it is saved after every stage, and a copy lost to a power cut
      // (an older one, or one its seal refuses) costs a rehash, never a wrong hash (what it names is
      // synced).
      const text = sealed(JSON.stringify({ version: VERSION, entries: sorted }));
      writeFileAtomic(this.file, text, this.tmpDir, false);
      this.dirty = false;
    } catch (e) {
      // Only a shortcut: a full or read-only disk costs the next build a re-read of the files, not this
      // build.
      const code = (e as NodeJS.ErrnoException).code;
      if (!["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM"].includes(code ?? "")) throw e;
    }
  }
}
