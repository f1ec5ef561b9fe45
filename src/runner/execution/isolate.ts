// A stage that calls task code, run in its own process (src/runner/code/isolation.ts): its job assembled
// from the stage's context, and what the process may read, from its key (the code it loads) and its inputs.
import { lstatSync, mkdirSync } from "../../util/builtins.js";
import { dirname, join } from "node:path";
import { HOST_MODULE, isolatedCode } from "../keys/stage-code.js";
import { packageRootOf } from "../code/code.js";
import { runIsolated } from "../code/isolation.js";
import { FUNCTION_MARK, type IsolatedInput, type IsolatedJob } from "../code/isolation-job.js";
import { guardedWith, unguarded } from "../code/task-guard.js";
import { installRoot } from "../../util/paths.js";
import type { StageContext, StageKind, StageOutput } from "../../contract/stage.js";
import type { TaskModule } from "../../contract/task.js";
import type { Json } from "../../util/json.js";
import type { Runtime } from "./scope.js";
import type { KeyedStage } from "./walk.js";

/** Above this many input files, the process may read the cache's whole objects folder (Node takes each
 *  allowed path as a flag, and the command line has a limit): docs/records.md says so. */
const MAX_LISTED_INPUTS = 2000;

/** The task object as data: each function replaced by a mark (the process takes them from their modules). */
function declarations(value: unknown): Json {
  if (typeof value === "function") return FUNCTION_MARK;
  if (Array.isArray(value)) return value.map(declarations);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== undefined)
        .map(([name, item]) => [name, declarations(item)]),
    );
  return value as Json;
}

function inputsOf(ctx: StageContext): Record<string, IsolatedInput> {
  const out: Record<string, IsolatedInput> = {};
  for (const [name, view] of Object.entries(ctx.inputs)) {
    const hashes = { ...view.hashes };
    if (!Object.keys(hashes).length) {
      out[name] = { hashes, paths: {}, file: view.path() };
      continue;
    }
    const paths = Object.fromEntries(Object.keys(hashes).map((output) => [output, view.path(output)]));
    out[name] = { hashes, paths, ...(view.source !== undefined ? { source: view.source as Json } : {}) };
  }
  return out;
}

/**
 * The links Node's resolver passes through to reach the code (a package or a node_modules folder that is a
 * link, as `npm link` and workspaces make): it reads the link itself, so each must be allowed as a path.
 * Only links on the way up from a module, named `node_modules` or a package the code loads, are looked at.
 */
function linksToCode(files: string[]): string[] {
  const names = new Set<string>();
  for (const file of files) {
    const match = /.*[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(file);
    if (match) names.add(match[1]!);
  }
  const isLink = (path: string) => lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const file of files)
    for (let dir = dirname(file); !seen.has(dir); dir = dirname(dir)) {
      seen.add(dir);
      const modules = join(dir, "node_modules");
      for (const path of [modules, ...[...names].map((name) => join(modules, name))])
        if (isLink(path)) out.push(path);
    }
  return out;
}

/** What the process may read: the code it loads, medbench's own package.json files (its install root is
 *  found by them), and its inputs (their cache objects folder when they are too many to list). */
function readable(code: string[], inputs: Record<string, IsolatedInput>, taskRoots: string[]): string[] {
  const root = installRoot();
  const spec = Object.values(inputs).flatMap((input) => (input.file !== undefined ? [input.file] : []));
  const cached = Object.values(inputs).flatMap((input) => Object.values(input.paths));
  // A cache object's path is <cache>/objects/<2 hex>/<sha256>: too many are allowed as that folder.
  const objects =
    cached.length > MAX_LISTED_INPUTS ? [...new Set(cached.map((file) => dirname(dirname(file))))] : cached;
  const manifests = [root, join(root, "dist"), ...taskRoots].map((dir) => join(dir, "package.json"));
  // A package is keyed whole (code.ts: npm's record of every file, or the sha256 of each one, data files
  // too), so its whole folder is readable: a package may read its own data files.
  const packages = [...new Set(code.map((file) => packageRootOf(file) ?? file))];
  return [...packages, ...linksToCode(code), ...manifests, ...spec, ...objects];
}

/** Runs the stage in its own process (keyed as `keyed`); its outputs, as the stage kind returned them. */
export async function runStageIsolated(
  rt: Runtime,
  kind: StageKind,
  ctx: StageContext,
  keyed: Pick<KeyedStage, "key" | "record">,
  incomplete: (reason: string) => void,
): Promise<Record<string, StageOutput>> {
  const task = rt.task;
  const { key } = keyed;
  const code = isolatedCode(installRoot(), kind, ctx.params, task, keyed.record.task);
  const tmp = ctx.tempPath();
  mkdirSync(tmp, { recursive: true });
  const module = unguarded(task.module) as TaskModule;
  const job: IsolatedJob = {
    key,
    kind: kind.kind,
    kindModule: join(installRoot(), "dist", "stages", `${kind.kind}.js`),
    stage: ctx.stage,
    build: ctx.build,
    params: ctx.params,
    inputs: inputsOf(ctx),
    options: {
      projectRoot: ctx.options.projectRoot,
      ...(ctx.options.dataDir !== undefined ? { dataDir: ctx.options.dataDir } : {}),
      trustChanged: ctx.options.trustChanged,
      refresh: ctx.options.refresh,
    },
    env: Object.fromEntries(
      code.env.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]!]] : [])),
    ),
    tmp,
    task: {
      declared: declarations(module),
      modules: code.modules,
      whole: code.whole,
      guard: guardedWith(task.module),
    },
  };
  const roots = task.user ? [task.user.compiledRoot] : [];
  const host = join(installRoot(), HOST_MODULE);
  return runIsolated(job, readable(code.files, job.inputs, roots), host, { emit: ctx.emit, incomplete });
}
