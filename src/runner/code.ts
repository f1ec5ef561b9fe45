// The code identity of a stage: the compiled modules it runs (following their imports, stopping at the
// runner's infrastructure), and the exact version of each package that code imports; which modules a stage
// starts from is src/runner/stage-code.ts's. The compiled code is what runs, so it is what is hashed;
// checkCompiled() makes sure it was compiled from the sources beside it.
import { existsSync, readFileSync, readdirSync } from "../util/builtins.js";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { sha256Hex } from "../hash/sha256.js";
import { taskFolder } from "../contract/task-folder.js";
import { factsOf } from "./code-memo.js";
import { consult } from "../util/consulted.js";
import type { UserTask } from "./user-task.js";

export interface CodeIdentity {
  /** Install-relative path (dist/… for compiled modules, tasks/… for a task's data files) -> sha256. */
  files: Record<string, string>;
  /** npm package imported by that code -> its exact installed version. */
  packages: Record<string, string>;
}

// What compiled JavaScript loads, by a literal name: `require("x")` (CommonJS: TypeScript's static
// imports, `export … from` and literal `import("x")` all compile to it), and, were a module compiled as an
// ES module, `import … from "x"` / `export … from "x"` (from the start of a line, so that a comment or a
// message saying `from "10"` is not an import), `import("x")` and a bare `import "x"` (type-only imports
// are gone). A name in backticks counts when it holds no `${`. A specifier holds no white space.
// A computed name cannot be followed: tests/code-identity.test.ts allows only the two that load what is
// keyed otherwise (a task's module, by its folder; a schema validator, which only checks).
const NAME = /["'`]([^"'`\s$]+)["'`]/.source;
export const IMPORT_RE = new RegExp(
  [
    String.raw`\brequire\s*\(\s*${NAME}\s*\)`,
    String.raw`^\s*(?:import|export)\b[^;"'\`]*\bfrom\s*${NAME}`,
    String.raw`\bimport\s*\(\s*${NAME}\s*\)`,
    String.raw`^\s*import\s*${NAME}`,
  ].join("|"),
  "gm",
);

interface Scanned {
  sha256: string;
  modules: string[]; // absolute paths of the relative imports that exist
  packages: string[]; // names of the bare imports
}

// Code does not change while one process runs: read and hash each file once (and, through the code memo,
// not again in the next process while its stat is the same).
const scanned = new Map<string, Scanned>();

/** The names a compiled module imports (IMPORT_RE), in the order written. */
export const importsIn = (text: string): string[] =>
  [...text.matchAll(IMPORT_RE)].map((m) => m.slice(1).find((g) => g !== undefined)!);

/** A file's sha256 and, for a compiled module, the names it imports: through the code memo (a file whose
 *  stat is unchanged is not read again). */
export function moduleFacts(file: string): { sha256: string; imports: string[] } {
  return factsOf(file, "scan", (bytes) => ({
    sha256: sha256Hex(bytes),
    imports: file.endsWith(".js") ? importsIn(bytes.toString("utf8")) : [],
  }));
}

function scan(file: string): Scanned {
  let hit = scanned.get(file);
  if (hit) return hit;
  const { sha256, imports } = moduleFacts(file);
  const modules: string[] = [];
  const packages: string[] = [];
  for (const spec of imports) {
    if (spec.startsWith(".")) {
      const target = resolve(dirname(file), spec);
      consult(target);
      if (existsSync(target)) modules.push(target);
    } else if (!spec.startsWith("node:") && !isBuiltin(spec)) {
      packages.push(packageName(spec));
    }
  }
  hit = { sha256, modules, packages };
  scanned.set(file, hit);
  return hit;
}

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageName(spec: string): string {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

// Per root: medbench's own, and a user's repository holding a task of its own.
const lockedVersions = new Map<string, Record<string, string>>();

/** The versions package-lock.json pins (none without one), read once per process and remembered. */
function lockVersions(root: string): Record<string, string> {
  const known = lockedVersions.get(root);
  if (known) return known;
  const lockFile = join(root, "package-lock.json");
  consult(lockFile);
  const versions = !existsSync(lockFile)
    ? {}
    : factsOf(lockFile, "lock-versions", (bytes) => {
        const lock = JSON.parse(bytes.toString("utf8")) as {
          packages?: Record<string, { version?: string }>;
        };
        const out: Record<string, string> = {};
        for (const [path, entry] of Object.entries(lock.packages ?? {}))
          if (path.startsWith("node_modules/") && entry.version)
            out[path.slice("node_modules/".length)] = entry.version;
        return out;
      });
  lockedVersions.set(root, versions);
  return versions;
}

/** The version package-lock.json pins, else the one installed (medbench installed as a dependency). */
function packageVersion(root: string, name: string): string {
  const locked = lockVersions(root)[name];
  if (locked) return locked;
  for (let dir = root; ; dir = dirname(dir)) {
    const manifest = join(dir, "node_modules", name, "package.json");
    consult(manifest);
    if (existsSync(manifest))
      return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
    if (dirname(dir) === dir) return "unknown";
  }
}

/** Every file under `dir`, recursively, as absolute paths (none when it does not exist). */
export function filesUnder(dir: string): string[] {
  consult(dir);
  if (!existsSync(dir)) return [];
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  for (const e of entries) if (e.isDirectory()) consult(join(e.parentPath, e.name)); // a file added there
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

// The install's folders do not change while one process runs (each stage of a task lists the same folder).
const listed = new Map<string, string[]>();
function installFilesUnder(dir: string): string[] {
  let files = listed.get(dir);
  if (!files) listed.set(dir, (files = filesUnder(dir)));
  return files;
}

/**
 * Infrastructure: modules that store, send or show what stages compute and compute none of it (the cache,
 * the remote store, the HTTP client and the reply memo it fills, the loggers). A stage's key does not follow
 * into them (docs/tasks.md, "What a stage's key holds"); only the model and judge stages load any.
 */
export const INFRASTRUCTURE: readonly string[] = [
  "dist/src/runner/cache.js",
  "dist/src/remote/",
  "dist/src/model/client.js",
  "dist/src/model/http.js",
  "dist/src/model/reply-memo.js",
  "dist/src/log/",
];

export const isInfrastructure = (rel: string): boolean =>
  INFRASTRUCTURE.some((m) => (m.endsWith("/") ? rel.startsWith(m) : rel === m));

/**
 * The identity of the code reachable from `entries` (install-relative paths of compiled modules or data
 * files), following relative imports, with the packages those modules import; a module for which `stop`
 * holds is neither hashed nor followed. Package versions are read from `versionsRoot` (a user's repository,
 * for its own task's modules).
 */
export function codeIdentity(
  root: string,
  entries: string[],
  stop: (rel: string) => boolean = () => false,
  versionsRoot = root,
): CodeIdentity {
  const files: Record<string, string> = {};
  const packages = new Set<string>();
  const queue = entries.map((e) => resolve(root, e));
  while (queue.length) {
    const file = queue.pop()!;
    const rel = relative(root, file).split("\\").join("/");
    if (rel in files || stop(rel)) continue;
    const s = scan(file);
    files[rel] = s.sha256;
    queue.push(...s.modules);
    for (const p of s.packages) packages.add(p);
  }
  return {
    files: sorted(files),
    packages: sorted(Object.fromEntries([...packages].map((p) => [p, packageVersion(versionsRoot, p)]))),
  };
}

/**
 * A task of the user's repository (src/runner/user-task.ts): its compiled modules, scanned as a built-in
 * task's dist/ folder is, and its folder's other files, named `project:tasks/<name>/…` wherever the
 * repository is; the packages they import at the versions the repository pins; and the compiler's version.
 */
export function userTaskIdentity(task: UserTask, modules?: string[]): CodeIdentity {
  const compiled = modules ?? installFilesUnder(task.compiled).filter((f) => f.endsWith(".js"));
  const code = codeIdentity(task.compiledRoot, compiled, undefined, task.root);
  const data = codeIdentity(
    task.root,
    installFilesUnder(task.source).filter((f) => !f.endsWith(".ts")),
  );
  const files: Record<string, string> = {};
  for (const [rel, sha] of Object.entries({ ...code.files, ...data.files })) files[`project:${rel}`] = sha;
  return {
    files: sorted(files),
    packages: sorted({ ...code.packages, [task.compiler.name]: task.compiler.version }),
  };
}

/** Every file of a task's folder as key entries: its compiled modules, and its files that are not compiled
 *  (prompt data, tables), which run as they are. */
export function taskFolderEntries(root: string, task: string): string[] {
  return [...taskFolderModules(root, task), ...taskDataFiles(root, task)];
}

function taskFolderModules(root: string, task: string): string[] {
  const files = installFilesUnder(join(root, "dist", taskFolder(task))).filter((f) => f.endsWith(".js"));
  return files.map((f) => relative(root, f));
}

/** The task folder's files that are not compiled: any part may read them. */
export function taskDataFiles(root: string, task: string): string[] {
  const files = installFilesUnder(join(root, taskFolder(task))).filter((f) => !f.endsWith(".ts"));
  return files.map((f) => relative(root, f));
}

function sorted<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
