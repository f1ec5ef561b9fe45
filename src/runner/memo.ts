// Memo entries: a small pointer file per key naming a content-addressed object, both written atomically,
// so an entry is either absent or whole, and a damaged object is detected when read.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Cache } from "./cache.js";
import { writeFileAtomicQuick } from "./fsutil.js";
import type { MemoStore } from "./stage.js";
import { SHA256_RE } from "../hash/sha256.js";

export function memoStore(cache: Cache): MemoStore {
  const pointer = (ns: string, key: string) => join(cache.root, "memo", ns.replace(/[^a-z0-9_-]/gi, "_"), key.slice(0, 2), key);
  return {
    get(ns, key) {
      let hash: string;
      try { hash = readFileSync(pointer(ns, key), "utf8").trim(); } catch { return null; }
      if (!SHA256_RE.test(hash)) return null;
      try { return cache.read(hash); } catch { return null; }
    },
    put(ns, key, data) {
      // The object first, then the pointer; and a pointer whose object is missing reads as a miss anyway.
      const hash = cache.putQuick(data);
      writeFileAtomicQuick(pointer(ns, key), hash + "\n", cache.tmp);
    },
  };
}
