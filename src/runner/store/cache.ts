// Content-addressed store: objects by sha256, written atomically, verified when read.
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  createHash,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "../../util/builtins.js";
import type { Stats } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { writeFileAtomic } from "../../util/fsutil.js";
import { StatCache } from "./statcache.js";
import type { RemoteStore } from "../../remote/store.js";
import { remoteConfig, stageName } from "../../remote/opened.js";
import { consult } from "../../util/consulted.js";
import { CorruptObjectError } from "./corrupt.js";

export { CorruptObjectError };

// Small: a buffer of 1 MB per object copied left a voice-command build's results holding 4 MB until a
// collection, as the build ended (src/contract/records.ts says what a freed megabyte also costs).
const COPY_CHUNK = 1 << 16;

export type { StageManifest } from "./outcome.js";
import { wholeManifest, type StageManifest } from "./outcome.js";

/** A file's identity on disk: a replaced or rewritten object no longer matches it. */
const fileSignature = (st: Stats) => `${st.size}:${st.mtimeMs}:${st.ino}`;

export class Cache {
  readonly tmp: string;
  readonly stat: StatCache;
  /** Objects hashed (or written) by this process, by their file signature then: not hashed again on
   *  reads. */
  private readonly verified = new Map<string, string>();

  /** `remote`: the shared store behind this one (read-through and write-through), if any. */
  constructor(
    readonly root: string,
    readonly remote: RemoteStore | null = null,
  ) {
    this.tmp = join(root, "tmp");
    this.stat = new StatCache(join(root, "stat-cache.json"), this.tmp);
  }

  objectPath(hash: string): string {
    return join(this.root, "objects", hash.slice(0, 2), hash);
  }

  /** Stores bytes by their hash (fsync'd, and remembered by the stat cache). */
  put(data: string | Uint8Array): string {
    const hash = sha256Hex(data);
    const path = this.objectPath(hash);
    if (!existsSync(path)) {
      writeFileAtomic(path, data, this.tmp);
      this.stat.remember(path, hash);
      this.verified.set(hash, fileSignature(statSync(path)));
    }
    return hash;
  }

  /** Moves a fully written temp file into the store under its (already computed) hash. */
  adopt(tmp: string, hash: string): string {
    const path = this.objectPath(hash);
    if (!existsSync(path)) {
      mkdirSync(join(this.root, "objects", hash.slice(0, 2)), { recursive: true });
      renameSync(tmp, path);
      this.stat.remember(path, hash);
      this.verified.set(hash, fileSignature(statSync(path)));
    }
    return hash;
  }

  /** Present and intact: objects are immutable, so the stat cache remembers a verified one. Missing here,
   *  it is fetched from the remote (checked there against its hash). */
  async verify(hash: string): Promise<boolean> {
    const path = this.objectPath(hash);
    consult(path);
    if (existsSync(path)) {
      const actual = await this.stat.hash(path);
      if (actual === hash) return true;
      rmSync(path, { force: true }); // never used again; the producing stage reruns
    }
    const data = this.remote ? await this.remote.getObject(hash) : null;
    if (data === null) return false;
    this.put(data);
    return true;
  }

  /** The object's bytes, hashed on its first read in this process; later reads of the same file (size,
   *  mtime and inode unchanged since) skip the hash: a rebuild reads the requests once per stage. */
  read(hash: string): Buffer {
    const path = this.objectPath(hash);
    const fd = openSync(path, "r");
    let data: Buffer, signature: string;
    try {
      signature = fileSignature(fstatSync(fd));
      data = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
    if (this.verified.get(hash) !== signature) this.confirm(hash, path, signature, sha256Hex(data));
    return data;
  }

  /** Records the object as verified under its file's signature, or, when its bytes hash otherwise, removes
   *  it (the stage that made it runs again) and throws. */
  private confirm(hash: string, path: string, signature: string, actual: string): void {
    if (actual !== hash) {
      this.verified.delete(hash);
      rmSync(path, { force: true });
      throw new CorruptObjectError(hash, actual);
    }
    this.verified.set(hash, signature);
  }

  /** Writes the object to `dest` a chunk at a time, verified as `read` verifies it: a results folder's copy
   *  never holds a whole object in memory (a 100,000-item run's requests are tens of MB). */
  copyTo(hash: string, dest: string): void {
    const path = this.objectPath(hash);
    const src = openSync(path, "r");
    try {
      const signature = fileSignature(fstatSync(src));
      const hasher = this.verified.get(hash) === signature ? null : createHash("sha256");
      const out = openSync(dest, "w");
      try {
        const chunk = Buffer.allocUnsafe(COPY_CHUNK);
        for (let bytesRead; (bytesRead = readSync(src, chunk, 0, COPY_CHUNK, null)) > 0; ) {
          hasher?.update(chunk.subarray(0, bytesRead));
          writeFileSync(out, chunk.subarray(0, bytesRead)); // at the file's position, all of it
        }
      } finally {
        closeSync(out);
      }
      if (!hasher) return;
      const actual = hasher.digest("hex");
      if (actual !== hash) rmSync(dest, { force: true }); // no copy of damaged bytes left behind
      this.confirm(hash, path, signature, actual);
    } finally {
      closeSync(src);
    }
  }

  size(hash: string): number {
    return statSync(this.objectPath(hash)).size;
  }

  manifestPath(key: string): string {
    return join(this.root, "stages", `${key}.json`);
  }

  readManifest(key: string): StageManifest | null {
    consult(this.manifestPath(key));
    try {
      return JSON.parse(readFileSync(this.manifestPath(key), "utf8")) as StageManifest;
    } catch {
      return null;
    }
  }

  /** The manifest here, or else the remote's (a damaged or mislabelled one is refused). */
  async fetchManifest(key: string): Promise<StageManifest | null> {
    const local = this.readManifest(key);
    if (local && !local.incomplete) return local;
    const data = this.remote ? await this.remote.getKeyed(stageName(key)) : null;
    const manifest = data && wholeManifest(data, key);
    if (!manifest) return local;
    writeFileAtomic(this.manifestPath(key), data, this.tmp); // its outputs are checked as they are used
    return manifest;
  }

  /** Records a stage's manifest; a whole one (and its outputs) is also uploaded to the remote. */
  writeManifest(manifest: StageManifest): void {
    const text = JSON.stringify(manifest, null, 1) + "\n";
    writeFileAtomic(this.manifestPath(manifest.key), text, this.tmp);
    if (this.remote && !manifest.incomplete) this.upload(manifest, Buffer.from(text));
  }

  /** Uploads a whole stage: its outputs first, the manifest last (so a remote manifest names what is there
   *  unless that upload failed, which a reader then finds missing and recomputes). */
  upload(manifest: StageManifest, text = Buffer.from(JSON.stringify(manifest, null, 1) + "\n")): void {
    const remote = this.remote!;
    const outputs = [...new Set(Object.values(manifest.outputs))].map((hash) =>
      remote.putObject(hash, () => this.read(hash)),
    );
    void remote.putKeyed(stageName(manifest.key), text, outputs);
  }

  /** Leftover temp files of builds that were killed; safe to remove when older than a minute. */
  sweepTemp(): void {
    if (!existsSync(this.tmp)) return;
    for (const name of readdirSync(this.tmp)) {
      const path = join(this.tmp, name);
      try {
        if (Date.now() - statSync(path).mtimeMs > 60_000) rmSync(path, { force: true, recursive: true });
      } catch {
        /* raced */
      }
    }
  }
}

/** The project's cache, with the remote that MEDBENCH_REMOTE names behind it (the store's client loaded
 *  only then). */
export function openCache(
  root: string,
  env: Record<string, string | undefined>,
  warn: (message: string) => void,
  inform?: (message: string) => void,
): Cache {
  if (!remoteConfig(env)) return new Cache(root, null);
  const store = require("../../remote/store.js") as typeof import("../../remote/store.js");
  return new Cache(root, store.openRemote(env, warn, inform));
}
