// A stage that calls task code, run in its own process (src/runner/code/isolation.ts): the process started
// ahead of the stage's run (`warmStage`: what it may read and its variables come from its code, known before
// its inputs), then its job assembled from the stage's context, with its inputs linked into its inbox.
import type { Stats } from "node:fs";
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  rmSync,
  statSync,
} from "../../util/builtins.js";
import { dirname, join } from "node:path";
import { HOST_MODULE, isolatedCode, type IsolatedCode } from "../keys/stage-code.js";
import { packageRootOf } from "../code/code.js";
import { startIsolated, type IsolatedProcess } from "../code/isolation.js";
import { FUNCTION_MARK, type IsolatedInput, type IsolatedJob } from "../code/isolation-job.js";
import { guardedWith, unguarded } from "../code/task-guard.js";
import { installRoot } from "../../util/paths.js";
import type { StageContext, StageKind, StageOutput } from "../../contract/stage.js";
import type { TaskModule } from "../../contract/task.js";
import type { StageDecl } from "../../specfile/load.js";
import type { Json } from "../../util/json.js";
import type { StatCache } from "../store/statcache.js";
import type { Runtime } from "./scope.js";

/** A stage's process, started before its inputs exist, and what it was started with. */
export interface WarmStage {
  process: IsolatedProcess;
  /** Holds `in` (its inputs, linked when it runs) and `out` (what it writes). */
  folder: string;
  code: IsolatedCode;
  env: Record<string, string>;
  /** The task record of the key its code was worked out from (StageCode.task). */
  taskRecord: Json;
}

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

/** A cache object hard-linked into an inbox, and its stat before: the link moved its ctime. */
interface Link {
  object: string;
  before: Stats;
}

/** A cache object in the inbox, by its hash: a hard link (a copy where the file system has none), so the
 *  process reads its inputs and no other object of the cache. */
function linked(object: string, inbox: string, hash: string, links: Link[]): string {
  const path = join(inbox, hash);
  if (existsSync(path)) return path;
  const before = statSync(object);
  try {
    linkSync(object, path);
    links.push({ object, before });
  } catch {
    copyFileSync(object, path);
  }
  return path;
}

/** The inbox removed once its process has ended, and the stat cache told that only links changed. */
function unlinked(inbox: string, links: Link[], stat: StatCache): void {
  rmSync(inbox, { recursive: true, force: true });
  for (const { object, before } of links) stat.relinked(object, before);
}

function inputsOf(ctx: StageContext, inbox: string, links: Link[]): Record<string, IsolatedInput> {
  const out: Record<string, IsolatedInput> = {};
  for (const [name, view] of Object.entries(ctx.inputs)) {
    const hashes = { ...view.hashes };
    if (!Object.keys(hashes).length) {
      out[name] = { hashes, paths: {}, file: view.path() };
      continue;
    }
    const paths = Object.fromEntries(
      Object.entries(hashes).map(([output, hash]) => [
        output,
        linked(view.path(output), inbox, hash, links),
      ]),
    );
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

/** What the process may read besides its inbox: the code it loads, medbench's own package.json files (its
 *  install root is found by them), and the spec files the stage reads. */
function readable(code: string[], specFiles: string[], taskRoots: string[]): string[] {
  const root = installRoot();
  const manifests = [root, join(root, "dist"), ...taskRoots].map((dir) => join(dir, "package.json"));
  // A package is keyed whole (code.ts: npm's record of every file, or the sha256 of each one, data files
  // too), so its whole folder is readable: a package may read its own data files.
  const packages = [...new Set(code.map((file) => packageRootOf(file) ?? file))];
  return [...packages, ...linksToCode(code), ...manifests, ...specFiles];
}

/** Starts the process of stage `decl` (its key's task record `taskRecord`) in `folder`; `specFiles`: the
 *  files of the spec it reads. */
export function warmStage(
  rt: Runtime,
  decl: StageDecl,
  taskRecord: Json,
  folder: string,
  specFiles: string[],
): WarmStage {
  const kind = rt.kinds.get(decl.kind)!;
  const code = isolatedCode(installRoot(), kind, decl.params as Json, rt.task, taskRecord);
  const [inbox, tmp] = [join(folder, "in"), join(folder, "out")];
  mkdirSync(inbox, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  const env: Record<string, string> = Object.fromEntries(
    code.env.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]!]] : [])),
  );
  const roots = rt.task.user ? [rt.task.user.compiledRoot] : [];
  const host = join(installRoot(), HOST_MODULE);
  const reads = readable(code.files, specFiles, roots);
  const args = [join(installRoot(), "dist", "stages", `${kind.kind}.js`), kind.kind];
  const started = startIsolated({ stage: decl.name, reads, inbox, tmp, env, host, args });
  return { process: started, folder, code, env, taskRecord };
}

/** How a stage runs in its process: its key, the process, and the cache's stat cache (told of the objects
 *  linked into its inbox once the inbox is gone). */
export interface IsolatedRun {
  key: string;
  warm: WarmStage;
  stat: StatCache;
}

/** Runs the stage in its process; its outputs, as the stage kind returned them. */
export async function runStageIsolated(
  rt: Runtime,
  kind: StageKind,
  ctx: StageContext & Required<Pick<StageContext, "incomplete">>,
  { key, warm, stat }: IsolatedRun,
): Promise<Record<string, StageOutput>> {
  const module = unguarded(rt.task.module) as TaskModule;
  const [inbox, links] = [join(warm.folder, "in"), [] as Link[]];
  const job: IsolatedJob = {
    key,
    kind: kind.kind,
    stage: ctx.stage,
    build: ctx.build,
    params: ctx.params,
    inputs: inputsOf(ctx, inbox, links),
    options: {
      projectRoot: ctx.options.projectRoot,
      ...(ctx.options.dataDir !== undefined ? { dataDir: ctx.options.dataDir } : {}),
      trustChanged: ctx.options.trustChanged,
      refresh: ctx.options.refresh,
    },
    env: warm.env,
    tmp: join(warm.folder, "out"),
    task: {
      declared: declarations(module),
      modules: warm.code.modules,
      whole: warm.code.whole,
      guard: guardedWith(rt.task.module),
    },
  };
  try {
    return await warm.process.run(job, { emit: ctx.emit, incomplete: ctx.incomplete });
  } finally {
    unlinked(inbox, links, stat);
  }
}
