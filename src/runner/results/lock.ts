// medbench.lock: what the builds of each spec resolved: its pins, and per variable set (each model, each
// choice of configurations) the stage keys and outputs, so alternating models changes nothing.
// Deterministic: sorted keys, stable layout, rewritten only when its content changed.
import { readFileSync, existsSync } from "../../util/builtins.js";
import { writeFileAtomic } from "../../util/fsutil.js";
import { acquireFileLock } from "../../util/filelock.js";
import { stableJson } from "../../util/json.js";
import { HASH_RECIPE } from "../../specfile/hash.js";
import { DiagnosticError } from "../../errors.js";
import { escapePointer, type Json } from "../../util/json.js";
import { consult } from "../../util/consulted.js";
import type { StageOutcome } from "../store/outcome.js";

export const LOCK_SCHEMA = 2;

/** What each hash recipe changed, for the message a lock from an older recipe gets. */
const RECIPE_CHANGES: Record<number, string> = {
  2: "stage keys hash the compiled code that runs, the whole task folder and the packages it imports",
};

/** A stage as the lock records it: its outcome (kind, key, outputs), as build.json does too. */
export type LockStage = StageOutcome;
export interface LockBuild {
  variables: Record<string, Json>;
  stages: Record<string, LockStage>;
}
export interface LockSpec {
  slug: string;
  spec_hash: string;
  /** Source label -> release path -> sha256 (pinned by the spec, or trusted on first use). */
  pins: Record<string, Record<string, string>>;
  /** By build (buildId: variables, data source): the stages of the last build of that kind. */
  builds: Record<string, LockBuild>;
}

/**
 * A build's name in the lock: its variables as `name=value` pairs, sorted, values as JSON unless plain
 * strings; then `data=--data-dir` for a build of a release the user downloaded, whose stages differ from
 * the spec's own source's (a bundled sample), so that alternating the two changes nothing either.
 */
export function buildId(variables: Record<string, Json>, dataDir = false): string {
  const pairs = Object.keys(variables)
    .sort()
    .map((name) => {
      const value = variables[name];
      return `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`;
    });
  return [...pairs, ...(dataDir ? ["data=--data-dir"] : [])].join(" ");
}
export interface LockFile {
  schema: number;
  hash_recipe: number;
  specs: Record<string, LockSpec>;
}

export function readLock(path: string): LockFile {
  return parsedLock(path, lockFileText(path));
}

/** medbench.lock's text, or null when there is none. */
function lockFileText(path: string): string | null {
  consult(path);
  return existsSync(path) ? readFileSync(path, "utf8") : null;
}

/** The lock `text` (null: none yet) read from `path`, checked. */
function parsedLock(path: string, text: string | null): LockFile {
  if (text === null) return { schema: LOCK_SCHEMA, hash_recipe: HASH_RECIPE, specs: {} };
  let parsed: LockFile;
  try {
    parsed = JSON.parse(text) as LockFile;
  } catch (e) {
    throw new DiagnosticError([
      {
        file: path,
        message: `medbench.lock is not valid JSON (${(e as Error).message})`,
        fix: "restore it from git (git checkout medbench.lock)",
      },
    ]);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw wrongShape(path, "");
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
          `${HASH_RECIPE} (${RECIPE_CHANGES[HASH_RECIPE] ?? "a new key recipe"}), ` +
          "so every stage key changes",
        fix:
          "rebuild deliberately: `mv medbench.lock medbench.lock.old`, then `medbench build` each spec " +
          "(cached model replies are reused: no request is sent again)",
      },
    ]);
  }
  const bad = shapeProblem(parsed);
  if (bad !== null) throw wrongShape(path, bad);
  return parsed.schema === 1 ? fromSchema1(parsed) : parsed;
}

// The lock is read back by every build, and a build trusts it to name keys and outputs: a member of the
// wrong shape (a hand edit, a bad merge) is refused before anything runs, never found as a crash after the
// stages.
type Shape = "string" | "any" | { fields: Record<string, Shape> } | { each: Shape };
const STRINGS: Shape = { each: "string" };
const STAGE: Shape = { fields: { kind: "string", key: "string", outputs: STRINGS } };
const BUILD: Shape = { fields: { variables: { each: "any" }, stages: { each: STAGE } } };
const SPEC: Shape = {
  fields: { slug: "string", spec_hash: "string", pins: { each: STRINGS }, builds: { each: BUILD } },
};
// schema 1: what fromSchema1 keeps
const SPEC_1: Shape = { fields: { slug: "string", spec_hash: "string" } };

/** The JSON pointer of the first member of `lock` that is not of its shape, or null. */
function shapeProblem(lock: LockFile): string | null {
  return shapeAt(lock.specs, { each: lock.schema === 1 ? SPEC_1 : SPEC }, "/specs");
}

function shapeAt(value: unknown, shape: Shape, at: string): string | null {
  if (shape === "any") return null;
  if (shape === "string") return typeof value === "string" ? null : at;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return at;
  const members = value as Record<string, unknown>;
  const wanted: [string, Shape][] =
    "each" in shape ? Object.keys(members).map((name) => [name, shape.each]) : Object.entries(shape.fields);
  for (const [member, memberShape] of wanted) {
    const bad = shapeAt(members[member], memberShape, `${at}/${escapePointer(member)}`);
    if (bad !== null) return bad;
  }
  return null;
}

function wrongShape(path: string, pointer: string): DiagnosticError {
  return new DiagnosticError([
    {
      file: path,
      message:
        "medbench.lock is not a lock medbench wrote: " +
        (pointer === "" ? "it is not a JSON object" : `its member ${pointer} has the wrong shape`) +
        " (edited by hand, or a bad merge)",
      fix:
        "restore it from git (git checkout medbench.lock), or set it aside and rebuild: " +
        "`mv medbench.lock medbench.lock.old`, then `medbench build` each spec (cached replies are reused)",
    },
  ]);
}

/** Schema 1 held one build per spec, without its variables: keep the pins (what was trusted), drop the
 *  stages (the next build of each variable set records them again; replies are reused). */
function fromSchema1(old: LockFile): LockFile {
  const specs: Record<string, LockSpec> = {};
  for (const [specKey, spec] of Object.entries(old.specs ?? {}) as [string, LockSpec][])
    specs[specKey] = { slug: spec.slug, spec_hash: spec.spec_hash, pins: spec.pins ?? {}, builds: {} };
  return { ...old, schema: LOCK_SCHEMA, specs };
}

export function lockText(lock: LockFile): string {
  return stableJson(lock);
}

/** Writes the lock if its content changed; returns whether it did. Serialised by the lock file `guard`, kept
 *  in the cache (cache/locks/): one beside medbench.lock would change the project folder's mtime in every
 *  build, a no-op too, and a no-op whose project folder changed is never replayed
 *  (src/cli/noop-record.ts). */
export async function writeLock(
  path: string,
  guard: string,
  update: (lock: LockFile) => void,
): Promise<boolean> {
  return withFileLock(guard, () => {
    const before = lockFileText(path); // read once: its text tells whether the update changed it
    const lock = parsedLock(path, before);
    update(lock);
    const text = lockText(lock);
    if (text === (before ?? "")) return false;
    writeFileAtomic(path, text);
    return true;
  });
}

/** medbench.lock's own lock is held for a read and a write: a waiter gives up after 30 s. */
async function withFileLock<T>(lockPath: string, fn: () => T): Promise<T> {
  const release = await acquireFileLock(lockPath, { staleMs: 30_000, maxWaitMs: 30_000 });
  try {
    return fn();
  } finally {
    release();
  }
}
