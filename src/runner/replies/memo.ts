// The memo store of the model stage's per-request replies: one reply log per namespace (reply-log.ts: logs
// appended the moment a reply arrives, and their index, so a stage reads only the replies it asks for), with
// the shared remote cache behind it (read-through and write-through).
import { existsSync, readdirSync } from "../../util/builtins.js";
import { join } from "node:path";
import type { Cache } from "../store/cache.js";
import type { MemoStore } from "../../contract/stage.js";
import { ReplyLog } from "./reply-log.js";
import { claimName, replyName } from "../../remote/opened.js";
export { ReplyLog, type Compaction } from "./reply-log.js";

/** The memo folder of a namespace (its name made safe for a file name; also the remote's folder). */
export const replyFolder = (ns: string) => ns.replace(/[^a-z0-9_-]/gi, "_");

/** The namespace folders of a cache's memo (e.g. requests, and verify --live's). */
export function replyFolders(cache: Cache): string[] {
  const dir = join(cache.root, "memo");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** The reply log of a namespace folder (`indexing` false: a reader that writes nothing). */
export function replyLog(cache: Cache, folder: string, indexing = true): ReplyLog {
  return new ReplyLog(join(cache.root, "memo", folder), indexing);
}

export function memoStore(cache: Cache): MemoStore {
  const spaces = new Map<string, ReplyLog>();
  const folder = replyFolder;
  const space = (ns: string) => {
    let log = spaces.get(ns);
    if (!log) {
      log = replyLog(cache, folder(ns));
      spaces.set(ns, log);
    }
    return log;
  };
  const remote = cache.remote;
  const writes = new Set<Promise<boolean>>(); // puts to the remote not yet done
  /** How a claim's waiter finds the request's reply in the remote (checked against its hash). */
  const replyLookup = (ns: string, key: string) => {
    const name = replyName(folder(ns), key);
    return { lookup: () => remote!.getKeyed(name), refused: () => remote!.wasRefused(name) };
  };
  const keep = (ns: string, key: string, data: Buffer | null): Buffer | null => {
    if (data !== null) space(ns).put(key, data);
    return data;
  };
  // Read-through: a reply another machine received, checked against its hash, then kept here too. A reply
  // found nowhere is claimed first, so that machines sharing the remote send it once (remote/claims.ts).
  const remoteGet = async (ns: string, key: string): Promise<Buffer | null> => {
    const reply = replyLookup(ns, key);
    let data = await reply.lookup();
    if (data === null) {
      const claimed = await remote!.claims.claim(claimName(folder(ns), key), reply);
      data = claimed.kind === "found" ? claimed.data : null;
    }
    return keep(ns, key, data);
  };
  return {
    get: (ns, key) => {
      const local = space(ns).get(key);
      if (local !== null || !remote) return local;
      return remoteGet(ns, key);
    },
    put: (ns, key, data) => {
      space(ns).put(key, data); // here first: a reply is never lost to a remote that is down
      if (!remote) return;
      // The claim is answered once the reply is in the store; an upload that failed releases it at once,
      // so that another machine sends the request rather than wait for a reply that will not come.
      const claim = claimName(folder(ns), key);
      const written = remote.putKeyed(replyName(folder(ns), key), Buffer.from(data));
      writes.add(written);
      void written.finally(() => writes.delete(written));
      void written.then((uploaded) =>
        uploaded ? remote.claims.answered(claim) : remote.claims.release(claim),
      );
    },
    recheck: async (ns, key) => {
      if (!remote) return null;
      const checked = await remote.claims.recheck(claimName(folder(ns), key), replyLookup(ns, key));
      return keep(ns, key, checked.kind === "found" ? checked.data : null);
    },
    settled: async () => void (await Promise.all([...writes])),
  };
}
