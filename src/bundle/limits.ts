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
export function pathProblem(p: unknown): string | null {
  if (typeof p !== "string" || p === "") return "not a non-empty string";
  if (p.length > BUNDLE_LIMITS.pathChars) return `longer than ${BUNDLE_LIMITS.pathChars} characters`;
  if (p.includes("\0") || p.includes("\\")) return "holds a NUL or a backslash";
  if (CONTROL.test(p)) return "holds a control character";
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return "is absolute";
  if (p.split("/").some((s) => s === "" || s === "." || s === ".."))
    return "has an empty, `.` or `..` segment";
  return null;
}

/** Why `n` is not a plain name (one path segment: no separator, not `.` or `..`), or null. */
export function nameProblem(n: unknown): string | null {
  if (typeof n !== "string" || n === "") return "not a non-empty string";
  if (n.length > 255) return "longer than 255 characters";
  if (/[/\\\0]/.test(n)) return "holds a path separator or a NUL";
  if (CONTROL.test(n)) return "holds a control character";
  if (n === "." || n === "..") return "is `.` or `..`";
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
    for (const d of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${d.name}` : d.name;
      const st = lstatSync(join(dir, p));
      const type = st.isFile()
        ? "File"
        : st.isDirectory()
          ? "Directory"
          : st.isSymbolicLink()
            ? "link"
            : "special file";
      budget.add(p, type, st.isFile() ? st.size : 0);
      if (st.isDirectory()) walk(p);
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
const REQUIRED = [...TOP_LEVEL].filter((k) => !OPTIONAL.has(k));

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Every problem of bundle.json's shape: unknown or missing fields, and each path and name it holds that
 *  verify would join to a folder (the spec, its files, stage and output names, results files, pins). */
export function manifestProblems(b: unknown): string[] {
  if (!isObject(b)) return ["bundle.json is not a JSON object"];
  const out: string[] = [];
  for (const k of Object.keys(b))
    if (!TOP_LEVEL.has(k)) out.push(`bundle.json has an unknown field ${JSON.stringify(k.slice(0, 100))}`);
  for (const k of REQUIRED) if (!(k in b)) out.push(`bundle.json has no field ${k}`);
  const path = (what: string, p: unknown) => {
    const bad = pathProblem(p);
    if (bad) out.push(`bundle.json ${what} ${JSON.stringify(String(p).slice(0, 200))} ${bad}`);
  };
  const name = (what: string, n: unknown) => {
    const bad = nameProblem(n);
    if (bad) out.push(`bundle.json ${what} ${JSON.stringify(String(n).slice(0, 200))} ${bad}`);
  };
  const strings = (what: string, v: unknown) => {
    if (!isObject(v) || Object.values(v).some((x) => typeof x !== "string"))
      out.push(`bundle.json ${what} is not an object of strings`);
  };
  for (const k of ["slug", "spec_hash", "medbench"])
    if (k in b && typeof b[k] !== "string") out.push(`bundle.json ${k} is not a string`);
  if ("spec" in b) path("spec", b.spec);
  if ("files" in b) {
    if (!Array.isArray(b.files)) out.push("bundle.json files is not a list");
    else for (const f of b.files) path("file", f);
  }
  // A task of the author's repository: its sources, under spec/tasks/ (src/bundle/export.ts).
  if ("task_files" in b) {
    if (!Array.isArray(b.task_files)) out.push("bundle.json task_files is not a list");
    else
      for (const f of b.task_files)
        if (typeof f === "string" && !f.startsWith("tasks/"))
          out.push(`bundle.json task file ${JSON.stringify(f.slice(0, 200))} is not under tasks/`);
        else path("task file", f);
  }
  if ("variables" in b && !isObject(b.variables)) out.push("bundle.json variables is not an object");
  if ("results" in b) {
    strings("results", b.results);
    if (isObject(b.results)) for (const f of Object.keys(b.results)) path("results file", f);
  }
  if ("pins" in b) {
    if (!isObject(b.pins)) out.push("bundle.json pins is not an object");
    else
      for (const [source, files] of Object.entries(b.pins)) {
        strings(`pins of ${JSON.stringify(source.slice(0, 100))}`, files);
        if (isObject(files)) for (const f of Object.keys(files)) path("pinned file", f);
      }
  }
  if ("stages" in b) {
    if (!isObject(b.stages)) out.push("bundle.json stages is not an object");
    else
      for (const [stage, st] of Object.entries(b.stages)) {
        name("stage name", stage);
        if (
          !isObject(st) ||
          typeof st.kind !== "string" ||
          typeof st.key !== "string" ||
          !isObject(st.record)
        ) {
          out.push(
            `bundle.json stage ${JSON.stringify(stage.slice(0, 100))} is not {kind, key, outputs, record}`,
          );
          continue;
        }
        strings(`stage ${stage} outputs`, st.outputs);
        // A data stage's outputs are release files (paths under --data-dir); any other's, names.
        if (isObject(st.outputs))
          for (const o of Object.keys(st.outputs))
            if (o.includes("/")) path(`stage ${stage} output`, o);
            else name(`stage ${stage} output`, o);
      }
  }
  if ("withheld" in b) {
    const w = b.withheld;
    if (!isObject(w) || typeof w.why !== "string" || !Array.isArray(w.outputs))
      out.push("bundle.json withheld is not {why, outputs}");
  }
  return out;
}

/** bundle.json checked before use, or a refusal naming each problem. */
export function checkManifest(bundle: string, b: unknown): void {
  const problems = manifestProblems(b);
  if (problems.length) refuse(bundle, problems.slice(0, 20).join("; "));
}

/** The spec's own file inputs must stay inside the bundle's spec folder as well. */
export function checkSpecFiles(bundle: string, files: readonly string[]): void {
  const problems = files.flatMap((f) => {
    const bad = pathProblem(f);
    return bad ? [`the bundled spec reads file ${JSON.stringify(f.slice(0, 200))}, which ${bad}`] : [];
  });
  if (problems.length) refuse(bundle, problems.join("; "));
}
