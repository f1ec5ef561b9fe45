// What a local cache holds, by the names the shared remote uses: content objects, stage manifests (by stage
// key) and model replies (by namespace folder and request key). For `medbench cache` status, push and gc.
import { existsSync, readdirSync, statSync } from "../../util/builtins.js";
import { join } from "node:path";
import type { Cache, CacheStore } from "../store/cache.js";
import { replyFolders, replyLog } from "../replies/memo.js";
import { SHA256_RE } from "../../hash/sha256.js";

export interface Inventory {
  /** sha256 -> bytes. */
  objects: Map<string, number>;
  /** stage key -> bytes of its manifest. */
  stages: Map<string, number>;
  /** namespace folder -> request key -> reply bytes. */
  replies: Map<string, Map<string, number>>;
}

function files(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

export function localObjects(cache: Cache): Map<string, number> {
  const out = new Map<string, number>();
  const root = join(cache.root, "objects");
  for (const fan of files(root))
    for (const name of files(join(root, fan)))
      if (SHA256_RE.test(name) && name.startsWith(fan)) out.set(name, statSync(join(root, fan, name)).size);
  return out;
}

export function localStages(cache: Cache): Map<string, number> {
  const out = new Map<string, number>();
  const root = join(cache.root, "stages");
  for (const name of files(root)) {
    const key = name.slice(0, -".json".length);
    if (name.endsWith(".json") && SHA256_RE.test(key)) out.set(key, statSync(join(root, name)).size);
  }
  return out;
}

/** `indexing` false: reads without writing anything (status). */
export function localInventory(cache: Cache, indexing = true): Inventory {
  const replies = new Map<string, Map<string, number>>();
  for (const folder of replyFolders(cache)) replies.set(folder, replyLog(cache, folder, indexing).sizes());
  return { objects: localObjects(cache), stages: localStages(cache), replies };
}

/** The local cache with its reply logs, as copying to and from the remote takes it. */
export function cacheStore(cache: Cache): CacheStore {
  return {
    read: (hash) => cache.read(hash),
    put: (data) => cache.put(data),
    manifestPath: (key) => cache.manifestPath(key),
    readManifest: (key) => cache.readManifest(key),
    fetchManifest: (key) => cache.fetchManifest(key),
    replies: (folder) => replyLog(cache, folder),
  };
}

export const sum = (sizes: Map<string, number>) =>
  [...sizes.values()].reduce((total, size) => total + size, 0);
