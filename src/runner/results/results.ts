// The results folder of a build (spec `results:`): written whole or not at all, and checked by `status`.
// A build writes every file into a temporary folder beside the target and renames it into place, so that a
// reader (or a full disk) never sees a folder mixing two builds. Node has no atomic exchange of two folders:
// an existing folder is first renamed aside, then the new one into place, then the old one removed; a
// process killed between the two renames leaves no folder (never a mixed one), and the next build makes it.
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
  randomBytes,
} from "../../util/builtins.js";
import { basename, dirname, join, resolve } from "node:path";
import type { Cache } from "../store/cache.js";
import type { LockBuild } from "./lock.js";
import type { StageOutcome } from "../store/outcome.js";
import { projectPath, type Project } from "../project/project.js";
import { BuildFailure, DiagnosticError } from "../../errors.js";
import { processAlive } from "../../util/fsutil.js";
import { resultSource, type SpecFile } from "../../specfile/load.js";
import { stableJson } from "../../util/json.js";
import { staysInside } from "../../util/paths.js";
import { consult } from "../../util/consulted.js";
import { fillResultsDir, placeholderValues } from "../../specfile/results-dir.js";
import { MARKER, markerText, ownershipProblem } from "./ownership.js";
import { diagnosticAt } from "../../specfile/document.js";

/** The results folder of this build: `results.dir` with {slug} and variables filled in, plus the suffix. */
export function resultsDir(spec: SpecFile, project: Project, suffix: string): string {
  // The template and the variables were checked when the spec was loaded (results-dir.ts); again here, so
  // that no caller can reach a folder outside results/.
  const filled = fillResultsDir(spec.results!.dir, spec.slug, spec.variables);
  if ("message" in filled) throw new BuildFailure("results", filled.message, filled.fix);
  const rel = filled.dir + suffix;
  if (!staysInside(project.root, rel))
    throw new BuildFailure(
      "results",
      `the results folder ${rel} is not inside the project`,
      "give the variables in `results.dir` plain values",
    );
  return resolve(project.root, rel);
}

/** Every results file with the content hash it takes from its stage; refuses a source that does not
 *  exist. */
export function resultContents(
  spec: SpecFile,
  upstream: Map<string, Record<string, string>>,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [file, from] of Object.entries(spec.results!.files)) {
    const { stage, output } = resultSource(from);
    const hash = upstream.get(stage)?.[output];
    if (!hash)
      throw new BuildFailure(
        "results",
        `results file ${file}: stage ${stage} has no output ${output}`,
        "correct `results.files` in the spec",
      );
    out.set(file, hash);
  }
  return out;
}

/**
 * build.json: which build made these files (the spec, every stage's key and outputs, and which output each
 * results file is; what `medbench export` packs and src/runner/results/results-check.ts checks the files
 * against).
 */
/** A stage as build.json records it: a private partial run's leaves out the key. */
type RecordedStages = Record<string, Omit<StageOutcome, "key"> & { key?: string }>;

export function buildRecord(spec: SpecFile, project: Project, stages: RecordedStages): string {
  return stableJson({
    spec: projectPath(project, spec.path),
    spec_hash: spec.specHash,
    variables: spec.variables,
    stages,
    // Which stage output each results file is: what report, check and compare check it against.
    results: spec.results?.files ?? {},
  });
}

/** What the folder must hold: each results file by the hash of its stage's object, build.json's bytes, and
 *  the marker that says medbench made the folder (ownership.ts). */
interface Wanted {
  hashes: Map<string, string>;
  buildJson: Buffer;
  marker: Buffer;
}

/** What the results folder `dir` of these results must hold. */
function wanted(results: ResultsOf, dir: string): Wanted {
  const { spec, project, upstream, stages, privatePartial } = results;
  const hashes = resultContents(spec, upstream);
  const recorded = privatePartial ? resultsOutputsOnly(spec, stages) : stages;
  const of = {
    spec: projectPath(project, spec.path),
    dir: projectPath(project, dir),
    values: valuesOf(spec),
  };
  return {
    hashes,
    buildJson: Buffer.from(buildRecord(spec, project, recorded)),
    marker: Buffer.from(markerText(of, [...hashes.keys(), "build.json"])),
  };
}

/**
 * A partial run of a private release records in build.json only the outputs its results files are, and no
 * key: the requests' hash, and every key after it, would confirm a guess of the few private items it holds
 * (the lock does not record such a run either).
 */
function resultsOutputsOnly(spec: SpecFile, stages: LockBuild["stages"]): RecordedStages {
  const out: RecordedStages = {};
  for (const from of Object.values(spec.results?.files ?? {})) {
    const [stage, output] = [from.slice(0, from.indexOf("/")), from.slice(from.indexOf("/") + 1)];
    const outcome = stages[stage];
    if (!outcome || outcome.outputs[output] === undefined) continue;
    out[stage] ??= { kind: outcome.kind, outputs: {} };
    out[stage].outputs[output] = outcome.outputs[output];
  }
  return out;
}

/** The values of the variables in results.dir, which the marker records (ownership.ts). */
const valuesOf = (spec: SpecFile) => placeholderValues(spec.results!.dir, spec.variables);

/** The files of a folder, relative, with forward slashes (an absent folder has none). */
function listFiles(dir: string): string[] {
  consult(dir);
  if (!existsSync(dir)) return [];
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[];
  // A file added to a subfolder changes that folder, not `dir`: it is not a results file either.
  for (const entry of entries) if (entry.isDirectory()) consult(join(entry.parentPath, entry.name));
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(dir.length + 1)
        .split("\\")
        .join("/"),
    )
    .sort();
}

/**
 * What differs between a results folder and what it must hold (empty: it is this build's). A results file is
 * compared by its hash through the stat cache (size, mtime, ctime and inode), so that a no-op build neither
 * reads the stage objects nor the results whole; a file edited in any way has a new ctime and is rehashed.
 */
async function differences(dir: string, want: Wanted, cache: Cache): Promise<string[]> {
  consult(dir);
  if (!existsSync(dir)) return ["the results folder is missing"];
  const out: string[] = [];
  const present = new Set(listFiles(dir));
  for (const [name, hash] of want.hashes) {
    if (!present.has(name)) out.push(`${name} is missing`);
    else if ((await cache.stat.hash(join(dir, name))) !== hash) out.push(`${name} is not this build's`);
    present.delete(name);
  }
  consult(join(dir, "build.json"));
  if (!present.has("build.json")) out.push("build.json is missing");
  else if (!readFileSync(join(dir, "build.json")).equals(want.buildJson))
    out.push("build.json is not this build's");
  present.delete("build.json");
  consult(join(dir, MARKER));
  if (!present.has(MARKER) || !readFileSync(join(dir, MARKER)).equals(want.marker))
    out.push(
      `${MARKER} (what medbench wrote there) is ${present.has(MARKER) ? "not this build's" : "missing"}`,
    );
  present.delete(MARKER);
  for (const extra of present) out.push(`${extra} is not a results file`);
  return out;
}

/** The results of one build: its spec, where, from which stage outputs and keys. */
export interface ResultsOf {
  spec: SpecFile;
  project: Project;
  /** The results folder's suffix (resultsSuffix: `.release`, `.partial`). */
  suffix: string;
  cache: Cache;
  upstream: Map<string, Record<string, string>>;
  /** Every stage's key and outputs, as build.json records them. */
  stages: LockBuild["stages"];
  /** A partial run of a private release: build.json records only the results files' outputs, no key. */
  privatePartial: boolean;
}

/** Why the results folder is not the one these stages make (empty when it is). For `status`. */
export async function resultsDifferences(results: ResultsOf): Promise<string[]> {
  const { spec, project } = results;
  const dir = resultsDir(spec, project, results.suffix);
  const want = wanted(results, dir);
  return differences(dir, want, results.cache);
}

/** Temporary and set-aside folders of `dir` left by a killed build (their pid is gone). */
function sweepLeftovers(dir: string): void {
  const parent = dirname(dir);
  consult(parent); // a leftover appearing there sends the next build through this sweep
  if (!existsSync(parent)) return;
  const prefix = `.${basename(dir)}.`; // then tmp-PID- or old-PID-
  for (const name of readdirSync(parent)) {
    const left = name.startsWith(prefix) ? /^(tmp|old)-(\d+)-/.exec(name.slice(prefix.length)) : null;
    if (left && !processAlive(Number(left[2]))) rmSync(join(parent, name), { recursive: true, force: true });
  }
}

/** Writes the results folder whole (see the top of this file); unchanged folders are not touched. */
export async function writeResults(results: ResultsOf): Promise<string> {
  const { spec, project, cache } = results;
  const dir = resultsDir(spec, project, results.suffix);
  const want = wanted(results, dir);
  // Checked before any stage ran (checkResultsOwner); again here, just before the folder is replaced.
  const specKey = projectPath(project, spec.path);
  const problem = ownershipProblem(project, dir, specKey, valuesOf(spec), [...want.hashes.keys()]);
  if (problem) throw new BuildFailure("results", problem.message, problem.fix);
  sweepLeftovers(dir);
  if ((await differences(dir, want, cache)).length === 0) return dir;
  const tag = `${process.pid}-${randomBytes(4).toString("hex")}`;
  const tmp = join(dirname(dir), `.${basename(dir)}.tmp-${tag}`);
  const aside = join(dirname(dir), `.${basename(dir)}.old-${tag}`);
  try {
    mkdirSync(tmp, { recursive: true });
    for (const [name, hash] of want.hashes) {
      mkdirSync(dirname(join(tmp, name)), { recursive: true });
      cache.copyTo(hash, join(tmp, name)); // verified as it is copied, a chunk at a time
    }
    writeFileSync(join(tmp, "build.json"), want.buildJson);
    writeFileSync(join(tmp, MARKER), want.marker);
    if (existsSync(dir)) renameSync(dir, aside);
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(aside) && !existsSync(dir)) renameSync(aside, dir);
    throw writeFailure(e, projectPath(project, dir));
  }
  rmSync(aside, { recursive: true, force: true });
  return dir;
}

/** A failed write of project files as the user should read it: a full disk is a full disk. */
export function writeFailure(e: unknown, what: string, stage = "results"): BuildFailure | unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOSPC" || code === "EDQUOT")
    return new BuildFailure(
      stage,
      `cannot write ${what}: no space left on the device (${code})`,
      "free some disk space and build again (the stages already built are kept in the cache)",
    );
  if (code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "EFBIG")
    return new BuildFailure(
      stage,
      `cannot write ${what} (${code}: ${(e as Error).message})`,
      "make the folder writable and build again",
    );
  return e;
}

/**
 * Before anything runs: the spec is inside the project (its lock entry and build.json name it by a path
 * inside), and every results folder this build may write (`suffixes`: with and without `.release`) is one
 * medbench may replace (ownership.ts). A refusal is the spec's mistake: exit 2, at `results.dir`.
 */
export function checkResultsOwner(spec: SpecFile, project: Project, suffixes: string[]): void {
  const specKey = projectPath(project, spec.path);
  if (!staysInside(project.root, specKey))
    throw new DiagnosticError([
      {
        file: spec.path,
        message:
          `the spec is outside the project ${project.root}: medbench builds only specs inside the project ` +
          "it writes results, cache and medbench.lock in",
        fix:
          "copy the spec (and the files it names) into the project's specs/, or pass --project with the " +
          "folder that holds it",
      },
    ]);
  if (!spec.results) return;
  const files = Object.keys(spec.results.files);
  for (const suffix of new Set(suffixes)) {
    const dir = resultsDir(spec, project, suffix);
    const problem = ownershipProblem(project, dir, specKey, valuesOf(spec), files);
    if (problem)
      throw new DiagnosticError([diagnosticAt(spec.src, "/results/dir", problem.message, problem.fix)]);
  }
}
