// `medbench cache push|pull|status`: what the local cache and the shared remote each hold that the other
// lacks, and copying it across. Everything copied is immutable and checked against its hash on the way
// (a damaged local object is not uploaded, a damaged remote one is refused), and each copy lands whole or
// not at all: one PutObject of complete bytes there, a temp file and a rename (or one log record) here.
import { wholeManifest } from "../store/outcome.js";
import type { Inventory } from "./inventory.js";
import { SHA256_RE } from "../../hash/sha256.js";
import { keyedName, objectName, type RemoteStore, type Store } from "../../remote/store.js";
import { replyName, stageName } from "../../remote/opened.js";

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
  for (const [name, size] of [...stages, ...replies]) {
    const named = keyedName(name);
    if (named && "stage" in named) out.stages.set(named.stage, size);
    else if (named) {
      let folder = out.replies.get(named.folder);
      if (!folder) out.replies.set(named.folder, (folder = new Map()));
      folder.set(named.key, size);
    }
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
    stages: [...from.stages.keys()].filter((stageKey) => !to.stages.has(stageKey)).sort(),
    replies: [...from.replies].flatMap(([folder, keys]) =>
      [...keys.keys()]
        .filter((replyKey) => !to.replies.get(folder)?.has(replyKey))
        .sort()
        .map((replyKey): [string, string] => [folder, replyKey]),
    ),
  };
}

export interface Transfer {
  objects: number;
  stages: number;
  replies: number;
  /** Damaged copies refused (remote ones on pull, local ones on push): not copied. */
  refused: number;
  /** Manifests not copied: incomplete, or naming an output that is in neither store. */
  skipped: number;
}

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const COPIES_AT_ONCE = 8;

/** Copies what `from` holds and `to` lacks, by their inventories (`push`: the local cache to the remote;
 *  `pull`: back), each checked on the way: the objects, then the manifests (whole, naming themselves, their
 *  outputs in `to` by then), then the replies. */
export async function copy(
  from: Store,
  to: Store,
  fromHolds: Inventory,
  toHolds: Inventory,
): Promise<Transfer> {
  const todo = missing(fromHolds, toHolds);
  const out: Transfer = { objects: 0, stages: 0, replies: 0, refused: 0, skipped: 0 };
  const refusedBefore = from.refused;
  const copied = new Set<string>();
  await pool(todo.objects, COPIES_AT_ONCE, async (hash) => {
    const data = await from.getObject(hash);
    if (data === null || !(await to.putObject(hash, () => data))) return;
    copied.add(hash);
    out.objects++;
  });
  await pool(todo.stages, COPIES_AT_ONCE, async (key) => {
    const text = await from.getKeyed(stageName(key));
    if (text === null) return;
    const manifest = wholeManifest(text, key);
    const outputs = manifest ? Object.values(manifest.outputs) : [];
    if (!manifest || outputs.some((hash) => !copied.has(hash) && !toHolds.objects.has(hash))) out.skipped++;
    else if (await to.putKeyed(stageName(key), text)) out.stages++;
  });
  await pool(todo.replies, COPIES_AT_ONCE, async ([folder, key]) => {
    const data = await from.getKeyed(replyName(folder, key));
    if (data !== null && (await to.putKeyed(replyName(folder, key), data))) out.replies++;
  });
  out.refused = from.refused - refusedBefore;
  return out;
}
