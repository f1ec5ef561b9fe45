// What verify accepts from a bundle before it reads any of it: a bundle is untrusted input (anyone can hand
// one over), so its size, its members and every path or name its manifest holds are checked first, and a
// bundle that fails is refused whole with the figure or the name it broke (docs/verify.md, "Limits").
import { createReadStream, lstatSync, readdirSync } from "../util/builtins.js";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Unpack, type ReadEntry } from "tar";
import { UsageError } from "../errors.js";

const MiB = 1024 * 1024;

/** The limits, each documented with its figure in docs/verify.md. */
export const BUNDLE_LIMITS = {
  /** Members (files and folders) in the archive or folder. A real bundle holds a few dozen. */
  members: 5_000,
  /** Bytes of any one member, as unpacked. */
  memberBytes: 256 * MiB,
  /** Bytes of every member together, as unpacked (what verify may hold in memory at most). */
  totalBytes: 1024 * MiB,
  /** Bytes of bundle.json, which is parsed whole. */
  manifestBytes: 16 * MiB,
  /** Characters of a member's path. */
  pathChars: 1024,
} as const;

const figure = (bytes: number) => `${bytes / MiB} MiB`;

/** A bundle verify will not open: named, with the limit or the path it broke. */
export class BundleRefused extends UsageError {}

function refuse(bundle: string, why: string): never {
  throw new BundleRefused(
    `${bundle} is refused before anything in it is read: ${why} ` +
      '(a bundle medbench exports never does this; docs/verify.md, "Limits")',
  );
}

/** Characters no name medbench exports holds, and a terminal would obey (escape sequences, new lines). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `p` is not a plain relative path inside the bundle (no absolute, no `..`, no `\`), or null. */
export function pathProblem(path: unknown): string | null {
  if (typeof path !== "string" || path === "") return "not a non-empty string";
  if (path.length > BUNDLE_LIMITS.pathChars) return `longer than ${BUNDLE_LIMITS.pathChars} characters`;
  if (path.includes("\0") || path.includes("\\")) return "holds a NUL or a backslash";
  if (CONTROL.test(path)) return "holds a control character";
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "is absolute";
  if (path.split("/").some((segment) => segment === "" || segment === "." || segment === ".."))
    return "has an empty, `.` or `..` segment";
  return null;
}

/** Why `n` is not a plain name (one path segment: no separator, not `.` or `..`), or null. */
export function nameProblem(name: unknown): string | null {
  if (typeof name !== "string" || name === "") return "not a non-empty string";
  if (name.length > 255) return "longer than 255 characters";
  if (/[/\\\0]/.test(name)) return "holds a path separator or a NUL";
  if (CONTROL.test(name)) return "holds a control character";
  if (name === "." || name === "..") return "is `.` or `..`";
  return null;
}

/** Counts members and bytes against the limits; throws the first one broken. */
class Budget {
  private members = 0;
  private total = 0;
  private readonly files = new Set<string>();
  private readonly folders = new Set<string>();
  constructor(private readonly bundle: string) {}

  /** A path is one member: a file given twice, or a file that is also a folder (or on the way to a member),
   *  would leave the unpacked bundle holding whichever came last. */
  private place(path: string, type: string): void {
    const segments = path.split("/");
    for (let i = 1; i <= segments.length; i++) {
      const at = segments.slice(0, i).join("/");
      const isFile = i === segments.length && type === "File";
      if (this.files.has(at))
        refuse(this.bundle, `member ${at} ${isFile ? "appears twice" : "is both a file and a folder"}`);
      if (isFile && this.folders.has(at)) refuse(this.bundle, `member ${at} is both a file and a folder`);
      (isFile ? this.files : this.folders).add(at);
    }
  }

  add(member: string, type: string, size: number): void {
    // `tar -C dir .` names members ./x and the root ./ : the same paths.
    const path = member.replace(/^(\.\/)+/, "");
    if (path === "" || path === ".") return;
    const bad = pathProblem(path.replace(/\/$/, ""));
    if (bad) refuse(this.bundle, `member ${JSON.stringify(path.slice(0, 200))} ${bad}`);
    if (type !== "File" && type !== "Directory")
      refuse(this.bundle, `member ${path} is a ${type}, not a plain file or folder (links are refused)`);
    this.place(path.replace(/\/$/, ""), type);
    if (++this.members > BUNDLE_LIMITS.members)
      refuse(this.bundle, `it has more than ${BUNDLE_LIMITS.members} members`);
    if (path === "bundle.json" && size > BUNDLE_LIMITS.manifestBytes)
      refuse(this.bundle, `bundle.json is larger than ${figure(BUNDLE_LIMITS.manifestBytes)}`);
    if (size > BUNDLE_LIMITS.memberBytes)
      refuse(this.bundle, `member ${path} is larger than ${figure(BUNDLE_LIMITS.memberBytes)}`);
    this.total += size;
    if (this.total > BUNDLE_LIMITS.totalBytes)
      refuse(this.bundle, `its members together are larger than ${figure(BUNDLE_LIMITS.totalBytes)}`);
  }
}

/** Unpacks a .tar.gz into `dir`, checking every entry's header before its bytes are written; a broken
 *  limit or a hostile entry stops the unpacking at once (streamed: nothing is held in memory). */
export async function unpackBundle(file: string, dir: string): Promise<void> {
  const budget = new Budget(file);
  let refused: BundleRefused | null = null;
  const unpack = new Unpack({
    cwd: dir,
    strict: true,
    filter: (path: string, entry) => {
      if (refused) return false;
      const e = entry as ReadEntry;
      try {
        budget.add(path, e.type, e.size ?? 0);
        return true;
      } catch (err) {
        refused = err as BundleRefused;
        unpack.abort(refused);
        return false;
      }
    },
  });
  try {
    await pipeline(createReadStream(file), unpack);
  } catch (e) {
    if (refused) throw refused;
    throw new UsageError(`${file} is not a medbench bundle (.tar.gz): ${(e as Error).message}`);
  }
  if (refused) throw refused;
}

/** The same limits over a bundle given as a folder (links refused: they are not followed). */
export function checkBundleDir(dir: string): void {
  const budget = new Budget(dir);
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const st = lstatSync(join(dir, path));
      const type = st.isFile()
        ? "File"
        : st.isDirectory()
          ? "Directory"
          : st.isSymbolicLink()
            ? "link"
            : "special file";
      budget.add(path, type, st.isFile() ? st.size : 0);
      if (st.isDirectory()) walk(path);
    }
  };
  walk("");
}

const TOP_LEVEL = new Set([
  "format",
  "slug",
  "version",
  "spec_hash",
  "spec",
  "files",
  "variables",
  "medbench",
  "results",
  "pins",
  "stages",
  "withheld",
  "task_files",
]);
const OPTIONAL = new Set(["withheld", "task_files"]);
const REQUIRED = [...TOP_LEVEL].filter((field) => !OPTIONAL.has(field));

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** bundle.json's problems as they are found, with the checks of a path, a name and an object of strings. */
class Problems {
  readonly found: string[] = [];
  add(problem: string): void {
    this.found.push(problem);
  }
  path(what: string, value: unknown): void {
    const bad = pathProblem(value);
    if (bad) this.add(`bundle.json ${what} ${JSON.stringify(String(value).slice(0, 200))} ${bad}`);
  }
  name(what: string, value: unknown): void {
    const bad = nameProblem(value);
    if (bad) this.add(`bundle.json ${what} ${JSON.stringify(String(value).slice(0, 200))} ${bad}`);
  }
  strings(what: string, value: unknown): void {
    if (!isObject(value) || Object.values(value).some((item) => typeof item !== "string"))
      this.add(`bundle.json ${what} is not an object of strings`);
  }
}

/** Unknown and missing fields, and the fields that must be strings. */
function fieldProblems(manifest: Record<string, unknown>, problems: Problems): void {
  for (const key of Object.keys(manifest))
    if (!TOP_LEVEL.has(key))
      problems.add(`bundle.json has an unknown field ${JSON.stringify(key.slice(0, 100))}`);
  for (const key of REQUIRED) if (!(key in manifest)) problems.add(`bundle.json has no field ${key}`);
  for (const key of ["slug", "spec_hash", "medbench"])
    if (key in manifest && typeof manifest[key] !== "string")
      problems.add(`bundle.json ${key} is not a string`);
}

/** The spec, its files, and a task's sources (under spec/tasks/, src/bundle/export.ts). */
function fileProblems(manifest: Record<string, unknown>, problems: Problems): void {
  if ("spec" in manifest) problems.path("spec", manifest.spec);
  if ("files" in manifest) {
    if (!Array.isArray(manifest.files)) problems.add("bundle.json files is not a list");
    else for (const file of manifest.files) problems.path("file", file);
  }
  if ("task_files" in manifest) {
    if (!Array.isArray(manifest.task_files)) problems.add("bundle.json task_files is not a list");
    else
      for (const file of manifest.task_files)
        if (typeof file === "string" && !file.startsWith("tasks/"))
          problems.add(`bundle.json task file ${JSON.stringify(file.slice(0, 200))} is not under tasks/`);
        else problems.path("task file", file);
  }
}

/** The variables, the results files and the pinned files. */
function resultProblems(manifest: Record<string, unknown>, problems: Problems): void {
  if ("variables" in manifest && !isObject(manifest.variables))
    problems.add("bundle.json variables is not an object");
  if ("results" in manifest) {
    problems.strings("results", manifest.results);
    if (isObject(manifest.results))
      for (const file of Object.keys(manifest.results)) problems.path("results file", file);
  }
  if ("pins" in manifest) {
    if (!isObject(manifest.pins)) problems.add("bundle.json pins is not an object");
    else
      for (const [source, files] of Object.entries(manifest.pins)) {
        problems.strings(`pins of ${JSON.stringify(source.slice(0, 100))}`, files);
        if (isObject(files)) for (const file of Object.keys(files)) problems.path("pinned file", file);
      }
  }
}

/** Each stage's name, shape and output names. */
function stageProblems(stages: unknown, problems: Problems): void {
  if (!isObject(stages)) return problems.add("bundle.json stages is not an object");
  for (const [stage, bundled] of Object.entries(stages)) {
    problems.name("stage name", stage);
    if (
      !isObject(bundled) ||
      typeof bundled.kind !== "string" ||
      typeof bundled.key !== "string" ||
      !isObject(bundled.record)
    ) {
      problems.add(
        `bundle.json stage ${JSON.stringify(stage.slice(0, 100))} is not {kind, key, outputs, record}`,
      );
      continue;
    }
    problems.strings(`stage ${stage} outputs`, bundled.outputs);
    // A data stage's outputs are release files (paths under --data-dir); any other's, names.
    if (isObject(bundled.outputs))
      for (const output of Object.keys(bundled.outputs))
        if (output.includes("/")) problems.path(`stage ${stage} output`, output);
        else problems.name(`stage ${stage} output`, output);
  }
}

/** Every problem of bundle.json's shape: unknown or missing fields, and each path and name it holds that
 *  verify would join to a folder (the spec, its files, stage and output names, results files, pins). */
export function manifestProblems(manifest: unknown): string[] {
  if (!isObject(manifest)) return ["bundle.json is not a JSON object"];
  const problems = new Problems();
  fieldProblems(manifest, problems);
  fileProblems(manifest, problems);
  resultProblems(manifest, problems);
  if ("stages" in manifest) stageProblems(manifest.stages, problems);
  if ("withheld" in manifest) {
    const withheld = manifest.withheld;
    if (!isObject(withheld) || typeof withheld.why !== "string" || !Array.isArray(withheld.outputs))
      problems.add("bundle.json withheld is not {why, outputs}");
  }
  return problems.found;
}

/** bundle.json checked before use, or a refusal naming each problem. */
export function checkManifest(bundle: string, manifest: unknown): void {
  const problems = manifestProblems(manifest);
  if (problems.length) refuse(bundle, problems.slice(0, 20).join("; "));
}

/** The spec's own file inputs must stay inside the bundle's spec folder as well. */
export function checkSpecFiles(bundle: string, files: readonly string[]): void {
  const problems = files.flatMap((file) => {
    const bad = pathProblem(file);
    return bad ? [`the bundled spec reads file ${JSON.stringify(file.slice(0, 200))}, which ${bad}`] : [];
  });
  if (problems.length) refuse(bundle, problems.join("; "));
}
