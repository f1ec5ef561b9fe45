// Is a results folder what its build wrote? report, check and compare read results files (metrics.json,
// items.jsonl, units.jsonl) that anyone can edit; a number edited there must never be ranked, compared or
// counted. The build records in build.json which stage output each results file is (`results`) and every
// stage's outputs by sha256 (`stages`); a file whose sha256 is not its output's was not written by that
// build.
// The stage's manifest in the cache (when the cache still holds it) must record the same outputs, so that
// build.json edited to match an edited file is caught too: what `export` checks before it packs a result.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { Cache } from "../store/cache.js";
import type { StageOutcome } from "../store/outcome.js";

/** One Cache per folder for a process (report and check read many results folders of one cache). */
const caches = new Map<string, Cache>();
const cacheAt = (dir: string): Cache => caches.get(dir) ?? caches.set(dir, new Cache(dir)).get(dir)!;

/** What the build recorded of a results folder: each results file's sha256, or why nothing can be read. */
function recorded(dir: string, cacheDir: string | null): Map<string, string> | string {
  const file = join(dir, "build.json");
  if (!existsSync(file)) return "it has no build.json (no build wrote it)";
  let built: {
    results?: Record<string, string>;
    stages?: Record<string, Partial<StageOutcome>>;
  };
  try {
    built = JSON.parse(readFileSync(file, "utf8")) as typeof built;
  } catch {
    return "its build.json is not valid JSON";
  }
  if (!built || typeof built.results !== "object" || built.results === null || !built.stages)
    return "its build.json records no results files (written by an older medbench, or edited)";
  const cache = cacheDir && existsSync(cacheDir) ? cacheAt(cacheDir) : null;
  const out = new Map<string, string>();
  for (const [name, from] of Object.entries(built.results)) {
    const i = String(from).indexOf("/");
    const stage = built.stages[String(from).slice(0, i)];
    const output = String(from).slice(i + 1);
    const hash = stage?.outputs?.[output];
    if (typeof hash !== "string") return `its build.json records no output ${from} for ${name}`;
    const manifest = cache && typeof stage!.key === "string" ? cache.readManifest(stage!.key) : null;
    if (manifest && !manifest.incomplete && manifest.outputs?.[output] !== hash)
      return (
        `its build.json records ${from} as ${hash.slice(0, 12)}…, ` +
        "the cache's record of that stage does not"
      );
    out.set(name, hash);
  }
  return out;
}

/**
 * The results files of `dir` that are not what its build wrote, each with why (empty: all are). `files`
 * limits the check to those files (each must be a results file the build recorded); by default every one.
 * `cacheDir`: the project's cache, whose stage manifests build.json must agree with.
 */
export function modifiedSinceBuild(dir: string, cacheDir: string | null, files?: string[]): string[] {
  const want = recorded(dir, cacheDir);
  if (typeof want === "string") return [`build.json: ${want}`];
  const out: string[] = [];
  for (const name of files ?? [...want.keys()]) {
    const hash = want.get(name);
    const path = join(dir, name);
    if (!hash) out.push(`${name}: not a results file its build recorded`);
    else if (!existsSync(path)) out.push(`${name}: missing`);
    else {
      const found = sha256Hex(readFileSync(path));
      if (found !== hash)
        out.push(`${name} hashes to ${found.slice(0, 12)}…, its build wrote ${hash.slice(0, 12)}…`);
    }
  }
  return out;
}

/** One line naming a folder's modified files, for a refusal or a listing. */
export function modifiedMessage(shown: string, problems: string[]): string {
  return `${shown} is modified since build (${problems.join("; ")})`;
}
