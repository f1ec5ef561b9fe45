// What medbench owns under results/ (docs/hardening.md, "What medbench owns"): a results
// folder is medbench's only if a build made it, which it says by a sealed marker file recording the spec
// that built it, the folder, the values of results.dir's variables and every file the build wrote. A build
// replaces only such a folder, of its own spec and values, holding only those files; anything else (a folder
// it did not make, another spec's or another value's results, a user's file, an edited marker, a link
// leading out) is refused before any stage runs, and nothing is removed.
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from "../../util/builtins.js";
import { join, relative, sep } from "node:path";
import { stableJson } from "../../util/json.js";
import { consult } from "../../util/consulted.js";
import { sha256Hex } from "../../hash/sha256.js";
import { sealed, unseal } from "../../hash/sealed.js";
import type { Project } from "../project/project.js";

/** The marker a build writes into each results folder it makes (beside build.json). */
export const MARKER = ".medbench-results.json";

interface Marker {
  format: 2;
  /** The spec file (relative to the project) whose build made the folder. */
  spec: string;
  /** The folder itself (relative to the project, with `/`): a marker copied elsewhere proves nothing. */
  dir: string;
  /** The values the variables of results.dir had (placeholderValues): two values that fill the folder
   *  alike (`a/b`, `a_b`) never share it. */
  values: Record<string, string>;
  /** Every file the build wrote, relative, with `/`: the marker itself and build.json included. */
  files: string[];
}

/** What a build of `spec` records in the marker of its results folder `dir` (project-relative). */
export interface MarkerOf {
  spec: string;
  dir: string;
  values: Record<string, string>;
}

/** The marker's bytes for a build writing `files` (results files and build.json), sealed (hash/sealed.ts)
 *  so that a marker edited by hand (to claim a user's file) proves nothing. */
export function markerText(of: MarkerOf, files: string[]): string {
  const marker: Marker = {
    format: 2,
    spec: of.spec,
    dir: of.dir,
    values: of.values,
    files: [...new Set([...files, MARKER])].sort(),
  };
  return sealed(stableJson(marker));
}

/** Whether a folder is a results folder of a build (its marker, or the build.json of an older medbench). */
export function isResultsFolder(dir: string): boolean {
  consult(join(dir, MARKER));
  consult(join(dir, "build.json"));
  return existsSync(join(dir, MARKER)) || existsSync(join(dir, "build.json"));
}

/** Every entry below `dir`, relative with `/`, without following links: files, links and folders apart. */
function entriesOf(dir: string): { files: string[]; folders: string[] } {
  const files: string[] = [];
  const folders: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        folders.push(path);
        walk(path);
      } else files.push(path);
    }
  };
  walk("");
  return { files: files.sort(), folders: folders.sort() };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as unknown;
  } catch {
    return null;
  }
}

const show = (project: Project, path: string) => relative(project.root, path).split(sep).join("/") || ".";

/** Why a build may not write a results folder, and what the user can do. */
export interface OwnershipProblem {
  message: string;
  fix: string;
}

/** A results folder's marker as written: its record, an older medbench's unsealed marker (`older`: the
 *  folder is then judged as one from before the marker), or why it proves nothing. */
function readMarker(file: string): Marker | "older" | string {
  consult(file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return "it cannot be read";
  }
  const opened = unseal(text);
  if (!("body" in opened)) return text.trimStart().startsWith("{") ? "older" : opened.problem;
  let marker: Partial<Marker> | null = null;
  try {
    marker = JSON.parse(opened.body) as Partial<Marker>;
  } catch {
    return "it is not JSON";
  }
  const strings = (value: unknown) =>
    typeof value === "object" &&
    value !== null &&
    Object.values(value).every((field) => typeof field === "string");
  return marker?.format === 2 &&
    typeof marker.spec === "string" &&
    typeof marker.dir === "string" &&
    strings(marker.values) &&
    Array.isArray(marker.files) &&
    marker.files.every((file) => typeof file === "string")
    ? (marker as Marker)
    : "it is not a marker of this medbench";
}

/** What build.json says of a folder from before the sealed marker. */
interface BuiltRecord {
  spec?: unknown;
  variables?: Record<string, unknown>;
  results?: Record<string, unknown>;
  stages?: Record<string, { outputs?: Record<string, unknown> }>;
}

/**
 * The files of a folder from before the sealed marker that its build.json proves it wrote: each a results
 * file of that build (`results`; a build.json of before that record: a results file of this spec, `files`)
 * whose sha256 is the stage output build.json records for it. A build.json copied into a folder of the
 * user's proves nothing of the user's files.
 */
function provenByBuild(dir: string, built: BuiltRecord, present: string[], files: string[]): string[] {
  const stages = typeof built.stages === "object" && built.stages !== null ? built.stages : {};
  const outputOf = (from: unknown): unknown => {
    const i = String(from).indexOf("/");
    return stages[String(from).slice(0, i)]?.outputs?.[String(from).slice(i + 1)];
  };
  const results = typeof built.results === "object" && built.results !== null ? built.results : null;
  const any = new Set(Object.values(stages).flatMap((stage) => Object.values(stage?.outputs ?? {})));
  return present.filter((file) => {
    if (results ? !(file in results) : !files.includes(file)) return false;
    consult(join(dir, file));
    const hash = sha256Hex(readFileSync(join(dir, file)));
    return results ? outputOf(results[file]) === hash : any.has(hash);
  });
}

const listOf = (names: string[]) =>
  names.slice(0, 5).join(", ") + (names.length > 5 ? ` and ${names.length - 5} more` : "");

/** What a results folder's marker (or, before the marker, its build.json) proves of it: the spec that made
 *  it, the files of `present` its build wrote, byte for byte, the values it was built with, and the files
 *  the marker lists (a listed file not proven is one edited since, or a user's listed by hand). */
interface Claim {
  made: string;
  wrote: string[];
  builtWith: Record<string, unknown> | null;
  listed: string[];
}

function claimOf(
  project: Project,
  dir: string,
  present: string[],
  files: string[],
): Claim | OwnershipProblem {
  const name = show(project, dir);
  const marker = existsSync(join(dir, MARKER)) ? readMarker(join(dir, MARKER)) : null;
  const moveAway =
    `move ${name} out of results/ (medbench never replaces a folder it cannot prove it made; the next ` +
    "build makes it again from the cache)";
  if (typeof marker === "string" && marker !== "older")
    return {
      message:
        `${name}/${MARKER} is not the marker medbench wrote there (${marker}), so medbench cannot ` +
        `tell what it owns in ${name}`,
      fix: moveAway,
    };
  if (marker !== null && typeof marker === "object" && marker.dir !== name)
    return {
      message:
        `${name}/${MARKER} was written for ${marker.dir}: a marker copied from another results folder ` +
        "proves nothing here",
      fix: moveAway,
    };
  consult(join(dir, "build.json"));
  const built = readJson(join(dir, "build.json")) as BuiltRecord | null;
  if (typeof marker === "object" && marker !== null) {
    // The seal says the list is medbench's, not that each file is still what the build wrote: a resealed
    // list would otherwise make the next build delete a user's file. A listed file this build writes again
    // is its own (an edited one is restored from the cache); any other goes only when its sha256 is the
    // output build.json records for it.
    const listed = present.filter((file) => marker.files.includes(file));
    const rewritten = listed.filter((file) => files.includes(file));
    const proven = provenByBuild(
      dir,
      built ?? {},
      listed.filter((file) => !files.includes(file)),
      files,
    );
    const wrote = ["build.json", ...rewritten, ...proven];
    return { made: marker.spec, wrote, builtWith: marker.values, listed };
  }
  if (typeof built?.spec !== "string")
    return {
      message:
        `${name} exists, and medbench did not make it ` +
        (marker ? `(its ${MARKER} is not sealed, and it holds no build.json)` : `(it holds no ${MARKER})`),
      fix:
        `move ${name} out of results/ (medbench never replaces a folder it did not make), or choose a ` +
        "results.dir that names a new folder",
    };
  const builtWith = typeof built.variables === "object" && built.variables !== null ? built.variables : null;
  const wrote = ["build.json", ...provenByBuild(dir, built, present, files)];
  return { made: built.spec, wrote, builtWith, listed: [] };
}

/**
 * Why a build of `spec` (relative to the project) may not write its results folder `dir`, whose results
 * files are `files` and whose variables in results.dir have the `values` (placeholderValues) (null: it may).
 * The folders on the way from the project root must be real folders (no link), none of them another build's
 * results folder; `dir` itself is new, or a folder this spec's build made for the same values (its sealed
 * marker says so) holding nothing but what it wrote. A folder from before the sealed marker (build.json
 * naming this spec; each other file a results file of that build with the sha256 build.json records) is this
 * spec's too: the next build adds the marker.
 */
export function ownershipProblem(
  project: Project,
  dir: string,
  spec: string,
  values: Record<string, string>,
  files: string[],
): OwnershipProblem | null {
  const name = show(project, dir);
  const way = wayProblem(project, dir, name);
  if (way === "new") return null; // the build makes the folders from there on
  if (way !== "exists") return way;
  const present = entriesOf(dir);
  const claim = claimOf(project, dir, present.files, files);
  if ("message" in claim) return claim;
  const { made, wrote, builtWith } = claim;
  if (made !== spec)
    return {
      message: `${name} holds the results of ${made}, not of ${spec}`,
      fix: `give ${spec} its own results.dir, or remove ${name} if ${made} is gone`,
    };
  return valuesProblem(name, values, builtWith) ?? contentsProblem(name, present, wrote, claim.listed);
}

/** What stands in the way from the project root to `dir` (a link, a file, another build's results folder);
 *  "new" when `dir` or a folder above it does not exist yet (the build makes them). */
function wayProblem(project: Project, dir: string, name: string): OwnershipProblem | "new" | "exists" {
  const rel = relative(project.root, dir).split(sep);
  for (let i = 1; i <= rel.length; i++) {
    const path = join(project.root, ...rel.slice(0, i));
    const at = show(project, path);
    consult(path);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st) return "new";
    if (st.isSymbolicLink()) {
      const target = readlinkSync(path);
      return {
        message: `${at} is a link (to ${target}): medbench writes results only into real folders`,
        fix: `replace the link ${at} by a folder (to keep results on another disk, move the project there)`,
      };
    }
    if (!st.isDirectory())
      return {
        message: `${at} exists and is not a folder`,
        fix: `move ${at} away, or choose another results.dir`,
      };
    if (i > 1 && i < rel.length && isResultsFolder(path))
      return {
        message: `${name} would be inside ${at}, the results folder of another build`,
        fix: "choose a results.dir that is not inside another build's results folder",
      };
  }
  return "exists";
}

/** A folder built with other values of the results.dir variables than `values`. */
function valuesProblem(
  name: string,
  values: Record<string, string>,
  builtWith: Record<string, unknown> | null,
): OwnershipProblem | null {
  for (const [variable, value] of Object.entries(values)) {
    if (!builtWith || !(variable in builtWith)) continue;
    const before = String(builtWith[variable] ?? "");
    if (before !== value)
      return {
        message:
          `${name} holds the results of ${variable}=${before}, ` +
          `not of ${variable}=${value}: the two values ` +
          `name the same folder (results.dir makes a folder name of a value by replacing anything but ` +
          "letters, digits, `.`, `_` and `-` by `_`)",
        fix:
          `choose another value of ${variable}, or a results.dir that keeps the two apart; ` +
          `or move ${name} away if the results of ${variable}=${before} are no longer wanted`,
      };
  }
  return null;
}

/** A file or folder in the results folder that its build did not write (`wrote`), listed or not. */
function contentsProblem(
  name: string,
  present: { files: string[]; folders: string[] },
  wrote: string[],
  listed: string[],
): OwnershipProblem | null {
  const owned = new Set([...wrote, MARKER]);
  const changed = present.files.filter((file) => !owned.has(file) && listed.includes(file));
  if (changed.length)
    return {
      message:
        `${name} holds files that are not what its build wrote there: ` +
        `${listOf(changed)} (its marker lists ` +
        "them and this build does not write them, but their sha256 is not the output its build.json " +
        "records for them: edited since, or not medbench's)",
      fix:
        "move them out of the results folder (a build removes only the files it wrote, byte for byte), " +
        "then build again",
    };
  const theirs = present.files.filter((file) => !owned.has(file));
  // A folder is the build's when a file it wrote lies in it; any other (an empty one too) is not.
  theirs.push(
    ...present.folders.filter(
      (folder) => ![...owned].some((ownedPath) => ownedPath.startsWith(`${folder}/`)),
    ),
  );
  if (theirs.length)
    return {
      message: `${name} holds files medbench did not write: ${listOf(theirs)}`,
      fix:
        "move them out of the results folder (a build replaces it whole, and never removes what it did " +
        "not write), then build again",
    };
  return null;
}
