// The code identity of a stage: the compiled modules it runs (following their imports, stopping at the
// runner's infrastructure), and each package that code loads with every package it may load in turn, each
// keyed by all its files: by npm's own record of them (version and tarball integrity, src/runner/code/
// npm-records.ts) when npm installed it and nothing changed since, else by the sha256 of each of its
// files, data files too (a package linked or edited in place); which modules a stage starts from is
// src/runner/keys/stage-code.ts's. The compiled code is what runs, so it is what is hashed;
// checkCompiled() makes sure it was compiled from the sources beside it.
import { existsSync, readdirSync, realpathSync, statSync } from "../../util/builtins.js";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { DiagnosticError } from "../../errors.js";
import { sha256Hex } from "../../hash/sha256.js";
import { taskFolder } from "../../contract/task-folder.js";
import { factsOf } from "../../hash/code-memo.js";
import { consult, normalAbsolute } from "../../util/consulted.js";
import type { UserTask } from "./user-task.js";
import { lockfile, recognise, type NpmEntry, type Recognised } from "./npm-records.js";

export interface CodeIdentity {
  /** Install-relative path (dist/… for compiled modules, tasks/… for a task's data files) -> sha256. */
  files: Record<string, string>;
  /** npm package that code loads (and every package that one may load) -> its installed version and its
   *  tarball's integrity as npm recorded it, or the sha256 over all its files. */
  packages: Record<string, string>;
}

// What compiled JavaScript loads, by a literal name: `require("x")` (CommonJS: TypeScript's static
// imports, `export … from` and literal `import("x")` all compile to it), and, were a module compiled as an
// ES module, `import … from "x"` / `export … from "x"` (from the start of a line, so that a comment or a
// message saying `from "10"` is not an import), `import("x")` and a bare `import "x"` (type-only imports
// are gone). A name in backticks counts when it holds no `${`. A specifier holds no white space.
// A computed name cannot be followed: tests/runner/code-identity.test.ts allows only the two that load
// what is keyed otherwise (a task's module, by its folder; a schema validator, which only checks).
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
  modules: string[]; // absolute paths of the relative imports that exist, and of the packages' entry files
  packages: string[]; // names of the bare imports that no installed package answers
}

// Code does not change while one process runs: read and hash each file once (and, through the code memo,
// not again in the next process while its stat is the same).
const scanned = new Map<string, Scanned>();

/** The names a compiled module imports (IMPORT_RE), in the order written. Each a copy: V8 makes a match of
 *  13 characters or more a slice of the text, and the code memo keeps the names, so a slice kept the
 *  module's whole text alive for the process (about 350 KB of a first build's heap). */
export const importsIn = (text: string): string[] =>
  [...text.matchAll(IMPORT_RE)].map((match) => copied(match.slice(1).find((group) => group !== undefined)!));

const copied = (text: string): string => JSON.parse(JSON.stringify(text)) as string;

/** A file's sha256 and, for a compiled module, the names it imports: through the code memo (a file whose
 *  stat is unchanged is not read again). */
export function moduleFacts(file: string): { sha256: string; imports: string[] } {
  return factsOf(file, "scan", (bytes) => ({
    sha256: sha256Hex(bytes),
    imports: /\.[cm]?js$/.test(file) ? importsIn(bytes.toString("utf8")) : [],
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
      const target = resolveRelative(file, spec);
      if (target) modules.push(target);
    } else if (!spec.startsWith("node:") && !isBuiltin(spec)) {
      const entry = resolvePackage(file, spec);
      if (entry) modules.push(entry);
      else packages.push(packageName(spec));
    }
  }
  hit = { sha256, modules, packages };
  scanned.set(file, hit);
  return hit;
}

/** resolve(dir, spec) for a relative specifier, `./x.js` or `../y/x.js`, from an absolute, normal folder,
 *  without resolve()'s walk over the whole path (a first build joins about 400: docs/performance.md,
 *  "Consulted paths taken as they are"); anything else goes to resolve(). */
export function joinRelative(dir: string, spec: string): string {
  if (!normalAbsolute(dir)) return resolve(dir, spec);
  let base = dir;
  let rest = spec;
  for (;;) {
    if (rest.startsWith("./")) rest = rest.slice(2);
    else if (rest.startsWith("../")) {
      base = base.slice(0, base.lastIndexOf("/"));
      rest = rest.slice(3);
    } else break;
  }
  const joined = `${base}/${rest}`;
  return normalAbsolute(joined) ? joined : resolve(dir, spec);
}

/** A relative import's file: as written, or (in a package, whose code names modules as Node resolves
 *  them) with `.js`, `.json` or `/index.js` added. */
function resolveRelative(file: string, spec: string): string | undefined {
  const target = joinRelative(dirname(file), spec);
  const inPackage = file.includes(`${sep}node_modules${sep}`);
  const candidates = inPackage
    ? [target, `${target}.js`, `${target}.json`, join(target, "index.js")]
    : [target];
  for (const candidate of candidates) {
    consult(candidate);
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The file Node loads for a bare import from `file` (the package's entry or the subpath's file). */
function resolvePackage(file: string, spec: string): string | undefined {
  try {
    const entry = createRequire(file).resolve(spec);
    consult(dirname(entry)); // the resolver looked there (a folder replaced by a link, a file added)
    return entry;
  } catch {
    return undefined; // not installed: it fails when it runs, and is keyed by name meanwhile
  }
}

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageName(spec: string): string {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** The installed package a file belongs to: the folder after its last `node_modules`. */
export function packageRootOf(file: string): string | null {
  const marker = `${sep}node_modules${sep}`;
  const at = file.lastIndexOf(marker);
  if (at < 0) return null;
  const rest = file.slice(at + marker.length).split(sep);
  return file.slice(0, at + marker.length) + rest.slice(0, rest[0]!.startsWith("@") ? 2 : 1).join(sep);
}

interface PackageFacts {
  name: string;
  version: string;
  /** Package-relative path -> sha256, of package.json and every file its loaded code reaches. */
  files: Record<string, string>;
}

/** A package's key entry: its version and one sha256 over the files of it that run (package.json, which
 *  says which run, included): an edit in place, a link, a transitive bump all change it. */
function packageEntry(facts: PackageFacts): string {
  const lines = Object.entries(sorted(facts.files)).map(([rel, sha]) => `${sha}  ${rel}\n`);
  return `${facts.version} sha256:${sha256Hex(lines.join(""))}`;
}

/** The entries package-lock.json pins under `root`, by install path (null without a lock). */
const lockEntries = (root: string) => lockfile(join(root, "package-lock.json"))?.entries ?? null;

// An install does not move while one process runs: its node_modules' real path, per root.
const modulesOf = new Map<string, string | null>();

/** The real path of `root`'s node_modules (Node resolves packages to real paths: node_modules may be a
 *  link), or null without one. */
function installedModules(root: string): string | null {
  if (modulesOf.has(root)) return modulesOf.get(root)!;
  const dir = join(root, "node_modules");
  consult(dir);
  const real = existsSync(dir) ? realpathSync(dir) : null;
  modulesOf.set(root, real);
  return real;
}

/** A package installed under `root` must be what its package-lock.json pins, as `npm ci` installs it:
 *  else the code that runs is not the code the lock names (a lock bumped without an install). */
function checkLocked(root: string, dir: string, facts: { name: string; version: string }): void {
  const locked = lockEntries(root);
  const modules = locked ? installedModules(root) : null;
  // No lock, or a package of another install (found above the root, or medbench's own beside it).
  if (!locked || !modules || !dir.startsWith(modules + sep)) return;
  const path = `node_modules/${relative(modules, dir).split("\\").join("/")}`;
  const pinned = locked[path]?.version;
  if (pinned === facts.version) return;
  throw new DiagnosticError([
    {
      file: join(root, "package-lock.json"),
      message:
        pinned === undefined
          ? `${path} (${facts.name} ${facts.version}) is installed, and package-lock.json does not name it`
          : `package-lock.json pins ${facts.name} ${pinned}, and ${path} holds ${facts.version}: ` +
            "the code that would run is not the code the lock names",
      fix: `run \`npm ci\` in ${root} (it installs exactly what package-lock.json pins)`,
    },
  ]);
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
 * into them (docs/tasks.md, "What a stage's key holds"); only the model and judge stages load any. The table
 * of protocols is not followed either: a route's own protocol is keyed with the route (stages/model.ts
 * routeIdentity), so that adding a protocol re-keys no stage. Nor are the batch APIs: a reply is stored the
 * same whichever way it came (stages/model-batch.ts stores a batch's answers as the HTTP client stores
 * online ones), so how a build sends (build --batch) is no part of what a stage computes.
 */
export const INFRASTRUCTURE: readonly string[] = [
  "dist/src/runner/store/cache.js",
  "dist/src/remote/",
  "dist/src/model/client.js",
  "dist/src/model/http.js",
  "dist/src/model/reply-memo.js",
  "dist/src/model/protocols.js",
  "dist/src/model/batch-api.js",
  "dist/src/model/openai-batch.js",
  "dist/src/model/anthropic-batch.js",
  "dist/src/model/gemini-batch.js",
  "dist/stages/model-batch.js",
  "dist/src/log/",
];

export const isInfrastructure = (rel: string): boolean =>
  INFRASTRUCTURE.some((infrastructure) =>
    infrastructure.endsWith("/") ? rel.startsWith(infrastructure) : rel === infrastructure,
  );

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
  const packages: Record<string, string> = {};
  const installed = new Map<string, PackageFacts>(); // package folder -> its files, read
  const known = new Map<string, Recognised>(); // package folder -> npm's record of it, not read
  const seen = new Set<string>();
  const queue = entries.map((e) => resolve(root, e));
  while (queue.length) {
    const file = queue.pop()!;
    const rel = relative(root, file).split("\\").join("/");
    if (seen.has(file) || stop(rel)) continue;
    seen.add(file);
    const pkg = rel.startsWith("node_modules/") || rel.startsWith("../") ? packageRootOf(file) : null;
    if (pkg && addRecognised(known, pkg, versionsRoot)) continue; // npm vouches for it: not read
    const scanned = scan(file);
    if (pkg) addPackageFile(installed, pkg, file, scanned.sha256);
    else files[rel] = scanned.sha256;
    queue.push(...scanned.modules);
    for (const name of scanned.packages) packages[name] = "not installed";
  }
  const label = (name: string, version: string) => (name in packages ? `${name}@${version}` : name);
  for (const [dir, facts] of installed) {
    checkLocked(versionsRoot, dir, facts);
    addEveryFile(dir, facts);
    packages[label(facts.name, facts.version)] = packageEntry(facts);
  }
  for (const [dir, npm] of known) {
    checkLocked(versionsRoot, dir, npm);
    packages[label(npm.name, npm.version)] = `${npm.version} ${npm.integrity}`;
  }
  return { files: sorted(files), packages: sorted(packages) };
}

// Per root and package folder: npm's record of it and of every package it may load, or null when npm's
// records cannot vouch for one of them.
const recognised = new Map<string, Recognised[] | null>();

/** Adds the package at `dir` and the packages it may load as npm recorded them; false (nothing added)
 *  when one of them is not recognised: the package is then read and hashed, file by file. */
function addRecognised(known: Map<string, Recognised>, dir: string, root: string): boolean {
  if (known.has(dir)) return true;
  const id = `${root}\n${dir}`;
  if (!recognised.has(id)) recognised.set(id, closure(dir, root));
  const found = recognised.get(id)!;
  if (!found) return false;
  for (const npm of found) known.set(npm.dir, npm);
  return true;
}

function closure(dir: string, root: string): Recognised[] | null {
  const out = new Map<string, Recognised>();
  const pinned = (path: string, modules: string): NpmEntry | undefined =>
    installedModules(root) === modules ? lockEntries(root)?.[path] : undefined;
  const queue = [dir];
  while (queue.length) {
    const next = queue.pop()!;
    if (out.has(next)) continue;
    const npm = recognise(next, pinned);
    if (!npm) return null;
    out.set(next, npm);
    queue.push(...npm.deps);
  }
  return [...out.values()];
}

/** Every file of a package npm cannot vouch for, data files too (not those of the packages installed
 *  inside it), hashed through the code memo. */
function addEveryFile(dir: string, facts: PackageFacts): void {
  const nested = `${sep}node_modules${sep}`;
  for (const file of filesUnder(dir)) {
    const rel = relative(dir, file);
    if (`${sep}${rel}`.includes(nested)) continue;
    facts.files[rel.split("\\").join("/")] ??= moduleFacts(file).sha256;
  }
}

/** Every file the modules `entries` (absolute paths) load, followed through relative and package imports,
 *  infrastructure included: what an isolated stage's process may read as code (isolation.ts). */
export function reachedFiles(entries: string[]): string[] {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    queue.push(...scan(file).modules);
  }
  return [...seen].sort();
}

function addPackageFile(installed: Map<string, PackageFacts>, dir: string, file: string, sha: string): void {
  let recorded = installed.get(dir);
  if (!recorded) {
    const manifest = join(dir, "package.json");
    const facts = factsOf(manifest, "package", (bytes) => {
      const manifest = JSON.parse(bytes.toString("utf8")) as { name?: string; version?: string };
      return {
        name: manifest.name ?? relative(dirname(dir), dir),
        version: manifest.version ?? "",
        sha256: sha256Hex(bytes),
      };
    });
    recorded = { name: facts.name, version: facts.version, files: { "package.json": facts.sha256 } };
    installed.set(dir, recorded);
  }
  recorded.files[relative(dir, file).split("\\").join("/")] = sha;
}

/**
 * A task of the user's repository (src/runner/code/user-task.ts): its compiled modules, scanned as a
 * built-in task's dist/ folder is, and its folder's other files, named `project:tasks/<name>/…` wherever the
 * repository is; the packages they import at the versions the repository pins; and the compiler's version.
 */
export function userTaskIdentity(task: UserTask, modules?: string[]): CodeIdentity {
  const compiled = modules ?? installFilesUnder(task.compiled).filter((file) => file.endsWith(".js"));
  const code = codeIdentity(task.compiledRoot, compiled, undefined, task.root);
  const files: Record<string, string> = {};
  for (const [rel, sha] of Object.entries(code.files)) files[`project:${rel}`] = sha;
  return {
    files: sorted(files),
    packages: sorted({ ...code.packages, [task.compiler.name]: task.compiler.version }),
  };
}

/** Every compiled module of a task's folder (its other files are read by no task code: a module imports a
 *  JSON table, which its key then holds; src/runner/code/task-rules.ts refuses any other read). */
export function taskFolderModules(root: string, task: string): string[] {
  const files = installFilesUnder(join(root, "dist", taskFolder(task))).filter((file) =>
    file.endsWith(".js"),
  );
  return files.map((file) => relative(root, file));
}

function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(
    Object.entries(record).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)),
  );
}
