// medbench.lock: what the last build of each spec resolved (pins, stage keys, outputs).
// Deterministic: sorted keys, stable layout, rewritten only when its content changed.
import { readFileSync, existsSync, openSync, closeSync, rmSync, statSync } from "node:fs";
import { writeFileAtomic } from "./fsutil.js";
import { stableJson } from "../util/json.js";
import { HASH_RECIPE } from "../spec/hash.js";
import { DiagnosticError } from "../spec/diagnostic.js";

export const LOCK_SCHEMA = 1;

/** What each hash recipe changed, for the message a lock from an older recipe gets. */
const RECIPE_CHANGES: Record<number, string> = {
  2: "stage keys hash the compiled code that runs, the whole task folder and the packages it imports",
};

export interface LockStage {
  kind: string;
  key: string;
  outputs: Record<string, string>;
}
export interface LockSpec {
  slug: string;
  spec_hash: string;
  /** Source label -> release path -> sha256 (pinned by the spec, or trusted on first use). */
  pins: Record<string, Record<string, string>>;
  stages: Record<string, LockStage>;
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
  if (parsed.schema !== LOCK_SCHEMA) {
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
  return parsed;
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

async function withFileLock<T>(lockPath: string, fn: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      closeSync(openSync(lockPath, "wx"));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      try {
        if (Date.now() - statSync(lockPath).mtimeMs > 30_000) rmSync(lockPath, { force: true });
      } catch {
        /* gone */
      }
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
