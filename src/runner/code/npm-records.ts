// What npm itself records of an install, so that an installed package is known by npm's word rather than
// by reading its files on every build: package-lock.json (what the project pins: version and integrity,
// the sha512 of the published tarball, so of every file the package holds, data files too) and the hidden
// lockfile node_modules/.package-lock.json (what npm installed in that folder, written after every
// install). npm trusts its hidden lockfile while no package folder is newer than it (Arborist's
// `assertNoNewer`, npm/cli workspaces/arborist/lib/shrinkwrap.js); a package is recognised here by the
// same rule, and by the lock naming the same tarball. Both files are read once per process and remembered
// across processes by the code memo.
import { existsSync, statSync } from "../../util/builtins.js";
import { join, sep } from "node:path";
import { factsOf } from "../../hash/code-memo.js";
import { consult } from "../../util/consulted.js";
import type { Json } from "../../util/json.js";

/** One package of a lockfile: its version, the integrity of its tarball, the names it may load. */
export interface NpmEntry {
  version: string;
  integrity: string | null;
  deps: string[];
}
type Entries = Record<string, NpmEntry>;

interface LockJson {
  packages?: Record<string, Record<string, unknown>>;
}

/** `node_modules/…` path -> its entry, of a lockfile's bytes. */
function entriesOf(bytes: Buffer): Entries {
  const lock = JSON.parse(bytes.toString("utf8")) as LockJson;
  const out: Entries = {};
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path.startsWith("node_modules/")) continue;
    const names = ["dependencies", "optionalDependencies", "peerDependencies"].flatMap((field) =>
      Object.keys((entry[field] as Record<string, string> | undefined) ?? {}),
    );
    out[path] = {
      version: typeof entry.version === "string" ? entry.version : "",
      integrity: typeof entry.integrity === "string" ? entry.integrity : null,
      deps: [...new Set(names)].sort(),
    };
  }
  return out;
}

const read = new Map<string, { entries: Entries; mtimeMs: number } | null>();

/** A lockfile's entries and its mtime (null when there is none), once per process. */
export function lockfile(file: string): { entries: Entries; mtimeMs: number } | null {
  if (read.has(file)) return read.get(file)!;
  consult(file);
  let out = null;
  if (existsSync(file)) {
    const mtimeMs = statSync(file).mtimeMs;
    const derive = (bytes: Buffer) => entriesOf(bytes) as unknown as Json;
    out = { entries: factsOf(file, "npm-lock", derive) as unknown as Entries, mtimeMs };
  }
  read.set(file, out);
  return out;
}

/** Where a package folder sits: its node_modules folder (the outermost, which holds npm's hidden lockfile)
 *  and its `node_modules/…` path as lockfiles name it. Null outside a node_modules. */
export function installPath(dir: string): { modules: string; path: string } | null {
  const marker = `${sep}node_modules${sep}`;
  const at = dir.indexOf(marker);
  if (at < 0) return null;
  const modules = dir.slice(0, at + marker.length - 1);
  return {
    modules,
    path: `node_modules/${dir
      .slice(at + marker.length)
      .split(sep)
      .join("/")}`,
  };
}

/** A package npm installed and nothing changed since: its version, integrity and the folders of the
 *  packages it may load (as Node resolves them from it), or null when npm's records cannot vouch for it. */
export interface Recognised {
  /** The package folder (real path). */
  dir: string;
  name: string;
  version: string;
  integrity: string;
  deps: string[];
}

/**
 * `dir` (a package folder, real path) as npm's hidden lockfile records it, when the entry has an
 * integrity, the folder is no newer than the lockfile (npm's own rule, with its 10 ms of jitter) and
 * `pinned` (the project lock's entry for it, when that lock covers the node_modules folder) names the same
 * tarball.
 */
export function recognise(
  dir: string,
  pinned: (path: string, modules: string) => NpmEntry | undefined,
): Recognised | null {
  const at = installPath(dir);
  if (!at) return null;
  const hidden = lockfile(join(at.modules, ".package-lock.json"));
  const entry = hidden?.entries[at.path];
  if (!hidden || !entry?.integrity) return null;
  const locked = pinned(at.path, at.modules);
  if (locked && locked.integrity !== entry.integrity) return null;
  const st = statSync(dir);
  consult(dir, st); // a package replaced, or a file added at its top, changes the folder
  if (st.mtimeMs > hidden.mtimeMs + 10) return null;
  const deps: string[] = [];
  for (const name of entry.deps) {
    const found = resolveIn(hidden.entries, at.path, name);
    if (found) deps.push(join(at.modules, found.slice("node_modules/".length)));
  }
  const name = at.path.slice(at.path.lastIndexOf("node_modules/") + "node_modules/".length);
  return { dir, name, version: entry.version, integrity: entry.integrity, deps };
}

/** The lockfile path Node would load `name` from, required by the package at `from`: its own
 *  node_modules, then each one above (undefined: not installed, an optional dependency). */
function resolveIn(entries: Entries, from: string, name: string): string | undefined {
  for (let base = from; ; ) {
    const candidate = `${base}/node_modules/${name}`;
    if (entries[candidate]) return candidate;
    const up = base.lastIndexOf("/node_modules/");
    if (up < 0) return entries[`node_modules/${name}`] ? `node_modules/${name}` : undefined;
    base = base.slice(0, up);
  }
}
