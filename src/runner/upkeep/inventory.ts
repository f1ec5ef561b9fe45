// What a local cache holds, by the names the shared remote uses: content objects, stage manifests (by stage
// key) and model replies (by namespace folder and request key). For `medbench cache` status, push, pull
// and gc.
import { existsSync, readFileSync, readdirSync, statSync } from "../../util/builtins.js";
import { join } from "node:path";
import { CorruptObjectError, type Cache } from "../store/cache.js";
import { replyFolders, replyLog } from "../replies/memo.js";
import type { ReplyLog } from "../replies/reply-log.js";
import { writeFileAtomic } from "../../util/fsutil.js";
import { keyedName, type Store } from "../../remote/store.js";
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

/** The local cache with its reply logs as a Store, the shared remote's interface: `cache push|pull` copies
 *  between the two. A damaged object is removed when read, and refused. */
export function localStore(cache: Cache): Store {
  const logs = new Map<string, ReplyLog>();
  const log = (folder: string) => {
    let found = logs.get(folder);
    if (!found) logs.set(folder, (found = replyLog(cache, folder)));
    return found;
  };
  let refused = 0;
  return {
    get refused() {
      return refused;
    },
    getObject: async (hash) => {
      try {
        return cache.read(hash);
      } catch (e) {
        if (e instanceof CorruptObjectError) refused++; // else gone meanwhile
        return null;
      }
    },
    putObject: async (_hash, data) => {
      cache.put(data());
      return true;
    },
    getKeyed: async (name) => {
      const named = keyedName(name);
      if (named && "folder" in named) return log(named.folder).get(named.key);
      const path = named && cache.manifestPath(named.stage);
      return path && existsSync(path) ? readFileSync(path) : null;
    },
    putKeyed: async (name, payload) => {
      const named = keyedName(name);
      if (named && "folder" in named) log(named.folder).put(named.key, payload);
      else if (named) writeFileAtomic(cache.manifestPath(named.stage), payload, cache.tmp);
      return named !== null;
    },
  };
}

export const sum = (sizes: Map<string, number>) =>
  [...sizes.values()].reduce((total, size) => total + size, 0);
