// What medbench works out from its own install files (a source's sha256, a compiled module's sha256 and
// imports, the versions package-lock.json pins), remembered across processes by stat signature (size, mtime,
// ctime, inode: src/util/stat-signature.ts, as the stat cache does), so that a no-op build neither reads
// nor hashes the code it keys stages by.
import { readFileSync, statSync } from "../util/builtins.js";
import { sameSignature, settled, signatureOf, type StatSignature } from "../util/stat-signature.js";
import { dirname, join } from "node:path";
import { installRoot } from "../util/paths.js";
import { writeFileAtomic } from "../util/fsutil.js";
import type { Json } from "../util/json.js";
import { consult } from "../util/consulted.js";
import { readSealed, sealed, warnDiscarded } from "./sealed.js";

// 2: the imports a scan found include CommonJS requires (dist/ is CommonJS); 3: one entry per file and
// derivation (a task source is both hashed and checked)
const VERSION = 3;

interface Entry extends StatSignature {
  /** Which derivation made `facts` (a file is always derived the same way; this guards a change of mind). */
  kind: string;
  facts: Json;
}

let file: string | null = null;
let entries: Record<string, Entry> = {};
let dirty = false;

/** Remembers facts in `path` from now on (a project's cache); without it they last one process. */
export function useCodeMemo(path: string): void {
  if (file === path) return;
  file = path;
  dirty = false;
  // Sealed (src/hash/sealed.ts): an edited hash would key stages by code that is not there, so an edited
  // memo is dropped whole. A missing or damaged one only costs a reread.
  const body = readSealed(path, (why) => warnDiscarded(path, why, "the install's code is read again"));
  entries = memoEntries(body);
  // A project without one (its first build) starts from what medbench's own build learnt of its install
  // (scripts/seed-code-memo.mjs), each entry trusted while its file's stat signature is the same.
  seed = body === null ? seedEntries() : new Map();
}

function memoEntries(body: string | null): Record<string, Entry> {
  try {
    const parsed = JSON.parse(body ?? "null") as { version?: number; entries?: typeof entries } | null;
    return parsed?.version === VERSION && parsed.entries ? parsed.entries : {};
  } catch {
    return {};
  }
}

// The seed's entries, each as its JSON, parsed when asked for: parsed whole as the build started, its
// 500 entries (npm's records among them) raised a 2,070-item first build's old generation peak from 14 to
// 21 MB, and its peak RSS by 16 MB.
let seed = new Map<string, string>();

/** dist/code-memo.json: a line of its version, then a line an entry, `id` TAB `entry` (each as JSON). */
function seedEntries(): Map<string, string> {
  const file = join(installRoot(), "dist/code-memo.json");
  const body = readSealed(file, (why) => warnDiscarded(file, why, "it is made by npm run build"));
  const out = new Map<string, string>();
  const lines = (body ?? "").split("\n");
  if (lines[0] !== JSON.stringify({ version: VERSION })) return out;
  for (const line of lines.slice(1)) {
    const tab = line.indexOf("\t");
    if (tab > 0) out.set(JSON.parse(line.slice(0, tab)) as string, line.slice(tab + 1));
  }
  return out;
}

function seeded(id: string): Entry | undefined {
  const json = seed.get(id);
  if (json === undefined) return undefined;
  seed.delete(id);
  try {
    return JSON.parse(json) as Entry;
  } catch {
    return undefined;
  }
}

/**
 * `derive(bytes)` for the file at `abs` (absolute), or what it gave when the file was last read unchanged.
 */
export function factsOf<T extends Json>(abs: string, kind: string, derive: (bytes: Buffer) => T): T {
  const st = statSync(abs);
  consult(abs, st);
  const id = kind === "scan" ? abs : `${abs}\n${kind}`; // a scan, the most frequent, by its path alone
  const hit = entries[id] ?? seeded(id);
  if (hit && hit.kind === kind && sameSignature(hit, st)) {
    if (entries[id] !== hit) {
      entries[id] = hit; // a seed's entry: the project's memo keeps it
      dirty = true;
    }
    return hit.facts as T;
  }
  const facts = derive(readFileSync(abs));
  if (settled(st)) {
    entries[id] = { ...signatureOf(st), kind, facts };
    dirty = true;
  }
  return facts;
}

/** Writes what was learnt in this process (a cache: a failure to write costs only a reread next time). */
export function saveCodeMemo(): void {
  if (!file || !dirty) return;
  try {
    const sorted = Object.fromEntries(
      Object.entries(entries).sort(([left], [right]) => (left < right ? -1 : 1)),
    );
    writeFileAtomic(
      file,
      sealed(JSON.stringify({ version: VERSION, entries: sorted })),
      dirname(file),
      false,
    );
    dirty = false;
  } catch {
    /* read-only cache folder: remembered for this process only */
  }
}
