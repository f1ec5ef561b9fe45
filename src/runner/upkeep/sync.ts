// `medbench cache push|pull|status`: what the local cache and the shared remote each hold that the other
// lacks, and copying it across. Everything copied is immutable and checked against its hash on the way
// (a damaged local object is not uploaded, a damaged remote one is refused), and each copy lands whole or not
// at all: one PutObject of complete bytes there, a temp file and a rename (or one log record) here.
import { readFileSync } from "../../util/builtins.js";
import type { CacheStore, ReplyFolder, StageManifest } from "../store/cache.js";
import type { Inventory } from "./inventory.js";
import { SHA256_RE } from "../../hash/sha256.js";
import { objectName, replyName, stageName, type RemoteStore } from "../../remote/store.js";

/** The remote's holdings by the same names as the local inventory, or null when it cannot be listed. */
export async function remoteInventory(remote: RemoteStore): Promise<Inventory | null> {
  const [objects, stages, replies] = await Promise.all(
    ["objects/", "stages/", "replies/"].map((folder) => remote.list(folder)),
  );
  if (!objects || !stages || !replies) return null;
  const out: Inventory = { objects: new Map(), stages: new Map(), replies: new Map() };
  for (const [name, size] of objects) {
    const hash = name.split("/")[2] ?? "";
    if (SHA256_RE.test(hash) && name === objectName(hash)) out.objects.set(hash, size);
  }
  for (const [name, size] of stages) {
    const match = /^stages\/([0-9a-f]{64})\.json$/.exec(name);
    if (match) out.stages.set(match[1]!, size);
  }
  for (const [name, size] of replies) {
    const match = /^replies\/([A-Za-z0-9_-]+)\/([0-9a-f]{64})$/.exec(name);
    if (!match) continue;
    let ns = out.replies.get(match[1]!);
    if (!ns) out.replies.set(match[1]!, (ns = new Map()));
    ns.set(match[2]!, size);
  }
  return out;
}

export interface Missing {
  objects: string[];
  stages: string[];
  replies: [folder: string, key: string][];
}

/** What `from` holds and `to` lacks. */
export function missing(from: Inventory, to: Inventory): Missing {
  return {
    objects: [...from.objects.keys()].filter((hash) => !to.objects.has(hash)).sort(),
    stages: [...from.stages.keys()].filter((k) => !to.stages.has(k)).sort(),
    replies: [...from.replies].flatMap(([folder, keys]) =>
      [...keys.keys()]
        .filter((k) => !to.replies.get(folder)?.has(k))
        .sort()
        .map((k): [string, string] => [folder, k]),
    ),
  };
}

export interface Transfer {
  objects: number;
  stages: number;
  replies: number;
  /** Damaged copies refused (remote ones on pull, local ones on push): not copied. */
  refused: number;
  /** Manifests not pushed: incomplete, or naming an output that is in neither cache. */
  skipped: number;
}

/** A manifest that may go to the shared cache: whole (not incomplete), naming itself. */
function shareableManifest(cache: CacheStore, key: string): StageManifest | null {
  const manifest = cache.readManifest(key);
  return manifest && manifest.key === key && !manifest.incomplete && typeof manifest.outputs === "object"
    ? manifest
    : null;
}

/** Uploads what the remote lacks: outputs before the manifests that name them. */
export async function push(cache: CacheStore, remote: RemoteStore, local: Inventory, there: Inventory) {
  const todo = missing(local, there);
  const out: Transfer = { objects: 0, stages: 0, replies: 0, refused: 0, skipped: 0 };
  const uploads = new Map<string, Promise<boolean>>();
  for (const hash of todo.objects)
    uploads.set(
      hash,
      remote.putObject(hash, () => {
        try {
          const data = cache.read(hash); // checked: a damaged local object is removed, not uploaded
          out.objects++;
          return data;
        } catch (e) {
          out.refused++;
          throw e;
        }
      }),
    );
  for (const key of todo.stages) {
    const manifest = shareableManifest(cache, key);
    const outputs = manifest ? [...new Set(Object.values(manifest.outputs))] : [];
    if (!manifest || outputs.some((hash) => !uploads.has(hash) && !there.objects.has(hash))) {
      out.skipped++;
      continue;
    }
    const text = readFileSync(cache.manifestPath(key));
    void remote.putKeyed(
      stageName(key),
      text,
      outputs.flatMap((hash) => uploads.get(hash) ?? []),
    );
    out.stages++;
  }
  const logs = new Map<string, ReplyFolder>();
  for (const [folder, key] of todo.replies) {
    let log = logs.get(folder);
    if (!log) logs.set(folder, (log = cache.replies(folder)));
    const payload = log.get(key); // whole and checked, or absent
    if (payload === null) continue;
    void remote.putKeyed(replyName(folder, key), payload);
    out.replies++;
  }
  await remote.settle();
  return out;
}

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const DOWNLOADS_AT_ONCE = 8;

/** Downloads what the local cache lacks, each checked against its hash before it is kept. */
export async function pull(cache: CacheStore, remote: RemoteStore, local: Inventory, there: Inventory) {
  const todo = missing(there, local);
  const out: Transfer = { objects: 0, stages: 0, replies: 0, refused: 0, skipped: 0 };
  const refusedBefore = remote.refused;
  await pool(todo.objects, DOWNLOADS_AT_ONCE, async (hash) => {
    const data = await remote.getObject(hash);
    if (data === null) return;
    cache.put(data);
    out.objects++;
  });
  await pool(todo.stages, DOWNLOADS_AT_ONCE, async (key) => {
    if ((await cache.fetchManifest(key)) !== null) out.stages++;
  });
  const logs = new Map<string, ReplyFolder>();
  await pool(todo.replies, DOWNLOADS_AT_ONCE, async ([folder, key]) => {
    const data = await remote.getKeyed(replyName(folder, key));
    if (data === null) return;
    let log = logs.get(folder);
    if (!log) logs.set(folder, (log = cache.replies(folder)));
    log.put(key, data);
    out.replies++;
  });
  out.refused = remote.refused - refusedBefore;
  return out;
}
