// medbench.lock: what the builds of each spec resolved: its pins, and per variable set (each model, each
// choice of configurations) the stage keys and outputs, so alternating models changes nothing.
// Deterministic: sorted keys, stable layout, rewritten only when its content changed.
import { readFileSync, existsSync, openSync, closeSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { processAlive, writeFileAtomic } from "./fsutil.js";
import { stableJson } from "../util/json.js";
import { HASH_RECIPE } from "../spec/hash.js";
import { DiagnosticError } from "../spec/diagnostic.js";
import type { Json } from "../util/json.js";

export const LOCK_SCHEMA = 2;

/** What each hash recipe changed, for the message a lock from an older recipe gets. */
const RECIPE_CHANGES: Record<number, string> = {
  2: "stage keys hash the compiled code that runs, the whole task folder and the packages it imports",
};

export interface LockStage {
  kind: string;
  key: string;
  outputs: Record<string, string>;
}
export interface LockBuild {
  variables: Record<string, Json>;
  stages: Record<string, LockStage>;
}
export interface LockSpec {
  slug: string;
  spec_hash: string;
  /** Source label -> release path -> sha256 (pinned by the spec, or trusted on first use). */
  pins: Record<string, Record<string, string>>;
  /** By variable set (buildId): the stages of the last build with those variables. */
  builds: Record<string, LockBuild>;
}

/** A variable set's name in the lock: `name=value` pairs, sorted, values as JSON unless plain strings. */
export function buildId(variables: Record<string, Json>): string {
  return Object.keys(variables)
    .sort()
    .map((k) => `${k}=${typeof variables[k] === "string" ? variables[k] : JSON.stringify(variables[k])}`)
    .join(" ");
}
export interface LockFile {
  schema: number;
  hash_recipe: number;
  specs: Record<string, LockSpec>;
}

export function readLock(path: string): LockFile {
  if (!existsSync(path)) return { schema: LOCK_SCHEMA, hash_recipe: HASH_RECIPE, specs: {} };
  let parsed: LockFile;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8")) as LockFile;
  } catch (e) {
    throw new DiagnosticError([
      {
        file: path,
        message: `medbench.lock is not valid JSON (${(e as Error).message})`,
        fix: "restore it from git (git checkout medbench.lock)",
      },
    ]);
  }
  if (parsed.schema !== LOCK_SCHEMA && parsed.schema !== 1) {
    throw new DiagnosticError([
      {
        file: path,
        message: `medbench.lock has schema ${parsed.schema}; this medbench reads schema ${LOCK_SCHEMA}`,
        fix: "use the medbench version that wrote it",
      },
    ]);
  }
  if (parsed.hash_recipe !== HASH_RECIPE) {
    // A recipe change is an explicit migration, never a silent rerun of everything (DVC's lesson).
    throw new DiagnosticError([
      {
        file: path,
        message:
          `medbench.lock was written with hash recipe ${parsed.hash_recipe}; this medbench uses recipe ` +
          `${HASH_RECIPE} (${RECIPE_CHANGES[HASH_RECIPE] ?? "a new key recipe"}), so every stage key changes`,
        fix:
          "rebuild deliberately: `mv medbench.lock medbench.lock.old`, then `medbench build` each spec " +
          "(cached model replies are reused: no request is sent again)",
      },
    ]);
  }
  return parsed.schema === 1 ? fromSchema1(parsed) : parsed;
}

/** Schema 1 held one build per spec, without its variables: keep the pins (what was trusted), drop the
 *  stages (the next build of each variable set records them again; replies are reused). */
function fromSchema1(old: LockFile): LockFile {
  const specs: Record<string, LockSpec> = {};
  for (const [k, v] of Object.entries(old.specs ?? {}) as [string, LockSpec][])
    specs[k] = { slug: v.slug, spec_hash: v.spec_hash, pins: v.pins ?? {}, builds: {} };
  return { ...old, schema: LOCK_SCHEMA, specs };
}

export function lockText(lock: LockFile): string {
  return stableJson(lock);
}

/** Writes the lock if its content changed; returns whether it did. Serialised by a lock file. */
export async function writeLock(path: string, update: (lock: LockFile) => void): Promise<boolean> {
  return withFileLock(`${path}.lck`, () => {
    const before = existsSync(path) ? readFileSync(path, "utf8") : "";
    const lock = readLock(path);
    update(lock);
    const text = lockText(lock);
    if (text === before) return false;
    writeFileAtomic(path, text);
    return true;
  });
}

/**
 * The lock file holds its owner's pid and host. A lock whose owner is gone (a killed build) is taken at once;
 * one of unknown owner (another host, or an older medbench) only after 30 s without change.
 */
async function withFileLock<T>(lockPath: string, fn: () => T): Promise<T> {
  const me = `${process.pid} ${hostname()}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      try {
        writeSync(fd, me);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      if (abandoned(lockPath)) continue;
      if (attempt > 600) throw new Error(`${lockPath} is held by another build`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

/** Removes the lock file when its owner is gone; returns whether it did. */
function abandoned(lockPath: string): boolean {
  let text: string, mtimeMs: number;
  try {
    text = readFileSync(lockPath, "utf8");
    mtimeMs = statSync(lockPath).mtimeMs;
  } catch {
    return true; // released meanwhile: try again at once
  }
  const m = /^(\d+) (\S+)\n$/.exec(text);
  const gone = m ? m[2] === hostname() && !processAlive(Number(m[1])) : Date.now() - mtimeMs > 30_000;
  if (!gone) return false;
  // Only the file that was judged: another build may have taken the lock since.
  try {
    if (readFileSync(lockPath, "utf8") === text) rmSync(lockPath, { force: true });
  } catch {
    /* gone */
  }
  return true;
}
