// `medbench cache gc`: removes from the local cache what no recorded build needs. A build is recorded by
// medbench.lock (every variable set of every spec) and by the build.json of every results folder in the
// project; what it needs is the manifest of each of its stages, every output they name, and the model
// replies those outputs were made from (the `request_sha256` of their records), so that a rebuild reuses
// them and a changed stage upstream of the model resends nothing. Lock and results are only read. Anything
// written in the last `keepRecentMs` is kept (a build running now may not have recorded it yet), and so is
// every reply log whose writer still runs.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "../../util/builtins.js";
import { join, relative } from "node:path";
import type { Cache } from "../store/cache.js";
import { readLock, type LockBuild } from "../results/lock.js";
import type { Project } from "../project/project.js";
import { localObjects, localStages } from "./inventory.js";
import { replyFolders, replyLog } from "../replies/memo.js";

export interface References {
  objects: Set<string>;
  stages: Set<string>;
  replies: Set<string>;
  /** Where they were found (the lock, results folders), for the report. */
  sources: string[];
}

/** Folders never searched for results: dependencies, version control, the cache itself. */
const SKIP = new Set(["node_modules", ".git"]);

/** The build.json files of the project's results folders (wherever a spec's `results.dir` put them). */
function buildRecords(project: Project): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP.has(entry.name) && !entry.name.startsWith(".") && path !== project.cacheDir) walk(path);
      } else if (entry.name === "build.json") out.push(path);
    }
  };
  walk(project.root);
  return out.sort();
}

const REQUEST_KEY = /"request_sha256":\s*"([0-9a-f]{64})"/g;
const MARK = Buffer.from('"request_sha256"');

/** Everything the recorded builds refer to. */
export function references(project: Project, cache: Cache): References {
  const refs: References = { objects: new Set(), stages: new Set(), replies: new Set(), sources: [] };
  const add = (stages: LockBuild["stages"] | undefined) => {
    for (const stage of Object.values(stages ?? {})) {
      if (typeof stage?.key === "string") refs.stages.add(stage.key);
      for (const hash of Object.values(stage?.outputs ?? {}))
        if (typeof hash === "string") refs.objects.add(hash);
    }
  };
  if (existsSync(project.lockPath)) {
    const lock = readLock(project.lockPath); // a damaged lock refuses gc (exit 2) rather than collect all
    for (const spec of Object.values(lock.specs))
      for (const build of Object.values(spec.builds)) add(build.stages);
    refs.sources.push("medbench.lock");
  }
  for (const file of buildRecords(project)) {
    try {
      const record = JSON.parse(readFileSync(file, "utf8")) as { spec_hash?: unknown; stages?: unknown };
      if (typeof record.spec_hash !== "string" || typeof record.stages !== "object") continue;
      add(record.stages as LockBuild["stages"]);
      refs.sources.push(relative(project.root, file));
    } catch {
      /* not a build record of ours */
    }
  }
  // Replies are named by the records of the outputs that hold model answers (replies, judged).
  for (const hash of refs.objects) {
    let data: Buffer;
    try {
      data = readFileSync(cache.objectPath(hash));
    } catch {
      continue;
    }
    if (data.indexOf(MARK) < 0) continue;
    for (const match of data.toString("utf8").matchAll(REQUEST_KEY)) refs.replies.add(match[1]!);
  }
  return refs;
}

export interface Collection {
  objects: { hash: string; bytes: number }[];
  stages: string[];
  replies: { folder: string; key: string }[];
  /** Bytes freed (objects, manifests and reply payloads). */
  bytes: number;
  kept: { objects: number; stages: number; replies: number };
}

/** Removes (or, dry, lists) what no recorded build refers to and is older than `keepRecentMs`. */
export function collect(cache: Cache, refs: References, keepRecentMs: number, dryRun: boolean): Collection {
  const before = Date.now() - keepRecentMs;
  const old = (path: string) => {
    try {
      return statSync(path).mtimeMs < before;
    } catch {
      return false;
    }
  };
  const out: Collection = {
    objects: [],
    stages: [],
    replies: [],
    bytes: 0,
    kept: { objects: 0, stages: 0, replies: 0 },
  };
  for (const [hash, bytes] of localObjects(cache)) {
    if (refs.objects.has(hash) || !old(cache.objectPath(hash))) {
      out.kept.objects++;
      continue;
    }
    out.objects.push({ hash, bytes });
    out.bytes += bytes;
    if (!dryRun) rmSync(cache.objectPath(hash), { force: true });
  }
  for (const [key, bytes] of localStages(cache)) {
    if (refs.stages.has(key) || !old(cache.manifestPath(key))) {
      out.kept.stages++;
      continue;
    }
    out.stages.push(key);
    out.bytes += bytes;
    if (!dryRun) rmSync(cache.manifestPath(key), { force: true });
  }
  for (const folder of replyFolders(cache)) {
    const log = replyLog(cache, folder, !dryRun);
    const total = log.size();
    const compaction = log.compact((key) => refs.replies.has(key), before, dryRun);
    for (const key of compaction.removed) out.replies.push({ folder, key });
    out.bytes += compaction.bytes;
    out.kept.replies += total - compaction.removed.length;
  }
  return out;
}
