// A run's records by item, as the item view shows them: the requests, replies and parses are stage outputs,
// read from the cache by the hashes build.json records (or from the results file that copies the output,
// when the cache no longer holds it); the items are the results folder's items.jsonl.
import { existsSync, readFileSync } from "../util/builtins.js";
import { join } from "node:path";
import { STAGE_KINDS } from "../../stages/index.js";
import { Cache, CorruptObjectError } from "../runner/store/cache.js";
import {
  readStoredRequests,
  streamRecords,
  type ItemRecord,
  type ParsedRecord,
  type RecordType,
  type ReplyRecord,
  type StoredRequest,
} from "../contract/records.js";
import type { Json } from "../util/json.js";

interface Built {
  results?: Record<string, string>;
  stages?: Record<string, { kind?: string; outputs?: Record<string, string> }>;
}

/** What the item view reads of a run: each record type by item id (absent: not kept, or withheld). */
export interface RunRecords {
  items: ItemRecord[];
  requests: Map<string, StoredRequest> | null;
  shared: Map<string, Json>;
  replies: Map<string, ReplyRecord> | null;
  parsed: Map<string, ParsedRecord> | null;
}

function builtOf(dir: string): Built {
  try {
    return JSON.parse(readFileSync(join(dir, "build.json"), "utf8")) as Built;
  } catch {
    return {};
  }
}

/** The object's bytes, checked against its hash; null when absent or damaged (then the results file). */
function cachedObject(cache: Cache, hash: string): Buffer | null {
  if (!existsSync(cache.objectPath(hash))) return null;
  try {
    return cache.read(hash);
  } catch (e) {
    if (e instanceof CorruptObjectError) return null;
    throw e;
  }
}

/** The bytes of the first stage output of this record type: the cache's object, else its results file. */
function outputBytes(dir: string, built: Built, type: RecordType, cache: Cache | null): Buffer | null {
  for (const [name, stage] of Object.entries(built.stages ?? {})) {
    const types = STAGE_KINDS.get(stage.kind ?? "")?.outputs;
    if (!types || types === "release") continue;
    for (const [output, outputType] of Object.entries(types as Record<string, string>)) {
      const hash = stage.outputs?.[output];
      if (outputType !== type || typeof hash !== "string") continue;
      const cached = cache ? cachedObject(cache, hash) : null;
      if (cached) return cached;
      const file = Object.entries(built.results ?? {}).find(([, from]) => from === `${name}/${output}`);
      if (file && existsSync(join(dir, file[0]))) return readFileSync(join(dir, file[0]));
      return null;
    }
  }
  return null;
}

function byId<T extends { id: string }>(
  type: "replies" | "parsed",
  data: Buffer | null,
): Map<string, T> | null {
  if (!data) return null;
  const out = new Map<string, T>();
  for (const record of streamRecords(type, { data })) out.set(record.id, record as unknown as T);
  return out;
}

/** The run's records (its task's withheld types too: the page writer leaves their text out, keeps flags). */
export function runRecords(root: string, runDir: string): RunRecords {
  const dir = join(root, runDir);
  const built = builtOf(dir);
  const cacheDir = join(root, "cache");
  const cache = existsSync(cacheDir) ? new Cache(cacheDir) : null;
  const items = existsSync(join(dir, "items.jsonl"))
    ? [...streamRecords("items", { file: join(dir, "items.jsonl") })]
    : [];
  const read = (type: RecordType) => outputBytes(dir, built, type, cache);
  const requestBytes = read("requests");
  const stored = requestBytes ? readStoredRequests(requestBytes.toString("utf8")) : null;
  return {
    items,
    requests: stored ? new Map(stored.stored.map((request) => [request.id, request])) : null,
    shared: stored?.shared ?? new Map(),
    replies: byId<ReplyRecord>("replies", read("replies")),
    parsed: byId<ParsedRecord>("parsed", read("parsed")),
  };
}
