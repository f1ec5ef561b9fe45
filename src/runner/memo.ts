// Memo entries (the model stage's per-request replies): one file per key holding the payload's sha256 on its
// first line and the payload after it, written atomically (temp file + rename, no fsync). After a killed
// process an entry is whole or absent; a damaged one fails its hash and reads as a miss.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Cache } from "./cache.js";
import { writeFileAtomicQuick } from "./fsutil.js";
import type { MemoStore } from "./stage.js";
import { sha256Hex } from "../hash/sha256.js";

export function memoStore(cache: Cache): MemoStore {
  const entry = (ns: string, key: string) => join(cache.root, "memo", ns.replace(/[^a-z0-9_-]/gi, "_"), key.slice(0, 2), key);
  return {
    get(ns, key) {
      let data: Buffer;
      try { data = readFileSync(entry(ns, key)); } catch { return null; }
      const nl = data.indexOf(10);
      if (nl !== 64) return null;
      const payload = data.subarray(65);
      return sha256Hex(payload) === data.subarray(0, 64).toString("latin1") ? payload : null;
    },
    put(ns, key, data) {
      const payload = Buffer.from(data);
      writeFileAtomicQuick(entry(ns, key), Buffer.concat([Buffer.from(`${sha256Hex(payload)}\n`), payload]), cache.tmp);
    },
  };
}
