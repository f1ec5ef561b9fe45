// A task in the user's own repository: `tasks/<name>/index.ts` beside the user's `specs/<name>.yaml`,
// compiled by medbench, module by module, to CommonJS files under the project's cache
// (`cache/compiled/tasks/<name>/`), so that its code identity is scanned exactly as a built-in task's dist/
// folder is (src/runner/code/code.ts). The compiler is TypeScript's single-file transpiler, pinned exactly
// as a dependency of medbench: no type check (a task's author runs tsc for that), one output per source, the
// same output for the same source and compiler version. A source whose sha256 is unchanged since the last
// compile (compiled.json) is not compiled again, so a no-op build does not load the compiler.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "../../util/builtins.js";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { DiagnosticError, type Diagnostic } from "../../errors.js";
import { consult } from "../../util/consulted.js";
import { filesUnder, importsIn, moduleFacts } from "./code.js";
import { factsOf } from "../../hash/code-memo.js";
import { installRoot } from "../../util/paths.js";
import { readSealed, sealed, warnDiscarded } from "../../hash/sealed.js";

export interface UserTask {
  /** The repository the task is in: the folder that holds its specs/ and tasks/. */
  root: string;
  /** The task's source folder, `<root>/tasks/<name>`. */
  source: string;
  /** The folder of the compiled tree (`cache/compiled`), which holds `tasks/<name>/*.js`. */
  compiledRoot: string;
  /** The compiled folder, `<compiledRoot>/tasks/<name>`. */
  compiled: string;
  /** The compiler, by package and exact version: part of every key of a stage that runs this task. */
  compiler: { name: string; version: string };
}

/**
 * The user's task `name` of the spec `specFile` (`<root>/specs/<spec>.yaml`), when
 * `<root>/tasks/<name>/index.ts` exists; else null (a task of the install). `cacheDir`: the project's
 * cache (default `<root>/cache`).
 */
export function userTaskOf(specFile: string, name: string, cacheDir?: string): UserTask | null {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(name)) return null;
  const root = dirname(dirname(resolve(specFile)));
  if (root === installRoot()) return null; // medbench's own specs run its own compiled tasks
  const source = join(root, "tasks", name);
  consult(join(source, "index.ts"));
  if (!existsSync(join(source, "index.ts"))) return null;
  const compiledRoot = join(cacheDir ?? join(root, "cache"), "compiled");
  return {
    root,
    source,
    compiledRoot,
    compiled: join(compiledRoot, "tasks", name),
    compiler: { name: "typescript", version: compilerVersion() },
  };
}

function compilerVersion(): string {
  const manifest = require.resolve("typescript/package.json");
  return factsOf(
    manifest,
    "version",
    (bytes) => (JSON.parse(bytes.toString("utf8")) as { version: string }).version,
  );
}

interface CompiledManifest {
  compiler: string;
  /** Source path (relative to the task folder) -> its sha256 when compiled. */
  sources: Record<string, string>;
  /** Compiled file (relative to the compiled folder) -> its sha256 as written. */
  outputs: Record<string, string>;
}

/** A path the compiled folder may hold: relative, no `.` or `..` or empty segment, no backslash. */
const inside = (rel: string): boolean =>
  !rel.includes("\\") && rel.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..");

/** compiled.json as written (sealed, every path inside the folder), or null: the folder is then rebuilt
 *  whole. An edited manifest or compiled file would otherwise run code the sources do not hold, or make the
 *  clean-up below remove a file outside the folder. */
function readManifest(file: string): CompiledManifest | null {
  const body = readSealed(file, (why) => warnDiscarded(file, why, "the task is compiled again"));
  try {
    const manifest = JSON.parse(body ?? "null") as CompiledManifest | null;
    const map = (value: unknown) =>
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      Object.entries(value).every(([name, field]) => inside(name) && typeof field === "string");
    return manifest &&
      typeof manifest.compiler === "string" &&
      map(manifest.sources) &&
      map(manifest.outputs)
      ? manifest
      : null;
  } catch {
    return null;
  }
}

interface Source {
  abs: string;
  /** Relative to the task folder, with `/`. */
  rel: string;
}

/** Compiles the task's sources whose sha256 changed (or all, for another compiler); removes the outputs of
 *  removed sources. A syntax error is the user's: file:line:column, nothing written for that build; so is an
 *  import of a file outside the task folder (refuseForeignImports). */

export function compileUserTask(task: UserTask): void {
  const sources: Source[] = filesUnder(task.source)
    .filter((file) => (file.endsWith(".ts") && !file.endsWith(".d.ts")) || file.endsWith(".json"))
    .map((file) => ({ abs: file, rel: relative(task.source, file).split("\\").join("/") }));
  const hashes = Object.fromEntries(
    sources.map((source) => [source.rel, factsOf(source.abs, "sha256", (bytes) => sha256Hex(bytes))]),
  );
  const manifestFile = join(task.compiled, "compiled.json");
  consult(manifestFile);
  const compiler = `${task.compiler.name}@${task.compiler.version}`;
  refuseLinkedEntry(task);
  refuseLinks(task);
  const before = previousCompilation(task, manifestFile, compiler);
  const stale = staleSources(task, sources, hashes, before, compiler);
  const removed = Object.keys(before.sources).filter((rel) => !(rel in hashes));
  if (!stale.length && !removed.length && before.compiler === compiler) {
    refuseForeignImports(task, sources, new Map());
    return;
  }
  const outputs = transpile(stale);
  refuseForeignImports(task, sources, new Map(outputs));
  // Node reads the compiled tree as CommonJS whatever the user's package.json says.
  put(join(task.compiledRoot, "package.json"), JSON.stringify({ type: "commonjs" }) + "\n");
  for (const [rel, text] of outputs) put(join(task.compiled, rel), text);
  for (const rel of removed) rmSync(join(task.compiled, jsName(rel)), { force: true });
  const written = Object.fromEntries(outputs.map(([rel, text]) => [rel, sha256Hex(Buffer.from(text))]));
  const kept = Object.fromEntries(
    sources.map((source) => jsName(source.rel)).map((js) => [js, written[js] ?? before.outputs[js]!]),
  );
  const manifest = { compiler, sources: hashes, outputs: kept };
  put(manifestFile, sealed(JSON.stringify(manifest, null, 1) + "\n"));
}

/** What the compiled folder's manifest says was compiled (nothing, when it says nothing whole). */
function previousCompilation(task: UserTask, manifestFile: string, compiler: string): CompiledManifest {
  const read = readManifest(manifestFile);
  // No manifest to say what was compiled (a kill, damage): drop what medbench writes there, the compiled
  // modules and its temporary files, so that no module of a removed source can still be imported; anything
  // else in the folder is not medbench's to remove.
  if (!read)
    for (const file of filesUnder(task.compiled))
      if (file.endsWith(".js") || file.endsWith(".tmp")) rmSync(file, { force: true });
  return read ?? { compiler, sources: {}, outputs: {} };
}

/** The sources to compile again: changed, compiled by another compiler, or whose output is gone or
 *  edited. */
function staleSources(
  task: UserTask,
  sources: Source[],
  hashes: Record<string, string>,
  before: CompiledManifest,
  compiler: string,
): Source[] {
  const outputHash = (js: string): string | undefined => {
    const abs = join(task.compiled, js);
    return existsSync(abs) ? factsOf(abs, "sha256", (bytes) => sha256Hex(bytes)) : undefined;
  };
  return sources.filter(
    (source) =>
      before.compiler !== compiler ||
      before.sources[source.rel] !== hashes[source.rel] ||
      before.outputs[jsName(source.rel)] === undefined ||
      outputHash(jsName(source.rel)) !== before.outputs[jsName(source.rel)],
  );
}

/** Each source compiled to CommonJS, by compiled name; a syntax error refuses them all, file:line:column. */
function transpile(stale: Source[]): [string, string][] {
  const ts = require("typescript") as typeof import("typescript");
  const outputs: [string, string][] = [];
  const problems: Diagnostic[] = [];
  for (const source of stale) {
    const text = readFileSync(source.abs, "utf8");
    // A JSON data file of the folder, copied as tsc copies one a module imports (its copy is keyed).
    if (source.rel.endsWith(".json")) {
      outputs.push([source.rel, text]);
      continue;
    }
    const out = ts.transpileModule(text, {
      fileName: source.abs,
      reportDiagnostics: true,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        sourceMap: false,
      },
    });
    for (const diagnostic of out.diagnostics ?? []) {
      const at =
        diagnostic.file && diagnostic.start !== undefined
          ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
          : null;
      problems.push({
        file: relative(process.cwd(), source.abs) || source.abs,
        ...(at ? { line: at.line + 1, column: at.character + 1 } : {}),
        message: ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"),
        fix: "correct the task's source, then build again",
      });
    }
    outputs.push([jsName(source.rel), out.outputText]);
  }
  if (problems.length) throw new DiagnosticError(problems);
  return outputs;
}

const jsName = (rel: string): string => rel.replace(/\.ts$/, ".js");

/**
 * A task's modules import only sources of its own folder: a stage's key holds the task folder's code, and
 * the compiled modules are the folder's alone, so an import of `../common/x.js` or `../other-task/y.js`
 * would run code no key holds (an edit there reruns nothing) or another task's compiled copy, stale or
 * missing. Refused where the import is written (file:line:column). `fresh`: the modules just compiled, by
 * compiled name; the others are read from the compiled folder (through the code memo: a no-op build reads
 * none).
 */
function refuseForeignImports(task: UserTask, sources: Source[], fresh: Map<string, string>): void {
  const known = new Set(sources.map((source) => source.rel));
  const folder = relative(task.root, task.source).split("\\").join("/");
  const problems: Diagnostic[] = [];
  for (const source of sources) {
    if (source.rel.endsWith(".json")) continue;
    const js = jsName(source.rel);
    const text = fresh.get(js);
    const imports = text !== undefined ? importsIn(text) : moduleFacts(join(task.compiled, js)).imports;
    for (const spec of new Set(imports)) {
      if (!spec.startsWith(".")) continue; // a package: keyed by the version the repository pins
      const target = posix.normalize(posix.join(posix.dirname(source.rel), spec));
      const outside = target === ".." || target.startsWith("../");
      const candidates = target.endsWith(".js")
        ? [target.replace(/\.js$/, ".ts")]
        : target.endsWith(".json")
          ? [target]
          : [`${target}.ts`, `${target}/index.ts`];
      if (!outside && candidates.some((candidate) => known.has(candidate))) continue;
      problems.push({
        file: relative(process.cwd(), source.abs) || source.abs,
        ...placeOf(readFileSync(source.abs, "utf8"), spec),
        message: outside
          ? `imports ${spec}, outside the task's folder ${folder}/: medbench compiles and keys only the ` +
            "folder's own code, so an edit there would rerun nothing"
          : `imports ${spec}, which is no .ts or .json file of ${folder}/ (medbench compiles only the ` +
            "folder's .ts files and copies its .json files, not through links)",
        fix: outside
          ? `copy what it needs into ${folder}/ and import it from there (or make it a package the ` +
            "repository installs)"
          : "import a source of the task folder by its compiled name (./x.js for x.ts), or a JSON file " +
            'of the folder by its own name (import table from "./table.json")',
      });
    }
  }
  if (problems.length) throw new DiagnosticError(problems);
}

/** The wiring module is compiled from the folder's own file: a link (to a file anywhere) is not followed,
 *  as no source of the folder is, so its task would have no compiled entry. */
function refuseLinkedEntry(task: UserTask): void {
  const entry = join(task.source, "index.ts");
  if (!lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink()) return;
  const file = relative(process.cwd(), entry) || entry;
  throw new DiagnosticError([
    {
      file,
      message:
        "the task's index.ts is a link: medbench compiles and keys only the task folder's own files, " +
        "never through a link",
      fix: `put the file itself there (cp --remove-destination "$(readlink -f ${file})" ${file})`,
    },
  ]);
}

/**
 * What went wrong loading a task's compiled modules, as the user's mistake where it is one: a package that
 * is not installed, at the import in the source that names it; any other error thrown at a module's top
 * level, with its message. Null for an error that is no task's (medbench's own).
 */
export function loadProblem(task: UserTask, e: unknown): Diagnostic | null {
  const err = e as { code?: unknown; message?: unknown; requireStack?: unknown } | null;
  const from = Array.isArray(err?.requireStack) ? String(err.requireStack[0]) : "";
  const request = /Cannot find module '([^']+)'/.exec(String(err?.message))?.[1];
  if (err?.code === "MODULE_NOT_FOUND" && request && from.startsWith(task.compiled + sep)) {
    const source = join(task.source, relative(task.compiled, from)).replace(/\.js$/, ".ts");
    const text = existsSync(source) ? readFileSync(source, "utf8") : "";
    const name = request.startsWith("@") ? request.split("/").slice(0, 2).join("/") : request.split("/")[0];
    return {
      file: relative(process.cwd(), source) || source,
      ...placeOf(text, request),
      message: `imports ${request}, a package that is not installed here`,
      fix: `install it in this repository (npm install ${name}), or remove the import`,
    };
  }
  if (!(e instanceof Error)) return null;
  return {
    file: relative(process.cwd(), join(task.source, "index.ts")),
    message: `loading the task's modules failed: ${e.message.split("\n")[0]}`,
    fix: "correct the task's code (what runs when its modules load), then build again",
  };
}

/** Where a module name is written in a source (its first quoted occurrence), 1-based. */
function placeOf(text: string, spec: string): { line?: number; column?: number } {
  const at = Math.min(
    ...['"', "'", "`"]
      .map((quote) => text.indexOf(`${quote}${spec}${quote}`))
      .map((i) => (i < 0 ? Infinity : i)),
  );
  if (at === Infinity) return {};
  const before = text.slice(0, at).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** The compiled folders are medbench's own, under its cache: one that is a link (to anywhere) is refused
 *  rather than written or cleaned through. The cache folder itself may be a link (to another disk). */
function refuseLinks(task: UserTask): void {
  const below = relative(dirname(task.compiledRoot), task.compiled).split(/[\\/]/);
  let at = dirname(task.compiledRoot);
  for (const part of below) {
    at = join(at, part);
    if (lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink())
      throw new DiagnosticError([
        {
          file: at,
          message:
            "this folder of medbench's cache is a link: medbench writes its compiled tasks only in " +
            "its own folders",
          fix: `remove the link (rm ${at}); the next build compiles the task there again`,
        },
      ]);
  }
  const inside = existsSync(task.compiled)
    ? readdirSync(task.compiled, { recursive: true, withFileTypes: true })
    : [];
  const link = inside.find((e) => e.isSymbolicLink());
  if (link) {
    const file = join(link.parentPath, link.name);
    throw new DiagnosticError([
      { file: file, message: "a link in medbench's compiled-task folder", fix: `remove it (rm ${file})` },
    ]);
  }
}

/** Whole or not at all: another build compiling the same task at once writes the same bytes. */
function put(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}
