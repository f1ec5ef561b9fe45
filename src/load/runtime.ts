// Loading what a command needs: the spec, its stage graph, its task module.
import { existsSync, readdirSync, readFileSync } from "../util/builtins.js";
import { join, relative, resolve } from "node:path";
import { loadSpec, type SpecFile } from "../specfile/load.js";
import { planStages } from "../graph/plan.js";
import { diagnosticAt } from "../specfile/document.js";
import { DiagnosticError, StageError, UsageError } from "../errors.js";
import { installRoot, medbenchVersion } from "../util/paths.js";
import { STAGE_KINDS } from "../../stages/index.js";
import type { Runtime } from "../runner/execution/executor.js";
import type { TaskModule } from "../../tasks/task.js";
import type { Json } from "../util/json.js";
import { checkSpec } from "../contract/check.js";
import type { BuildInfo, CheckEnv } from "../contract/stage.js";
import { HASH_RECIPE } from "../specfile/hash.js";
import { checkCompiled } from "../runner/code/compiled.js";
import { useCodeMemo } from "../hash/code-memo.js";
import { TASK_PATTERN, taskFolder } from "../contract/task-folder.js";
import { consult } from "../util/consulted.js";
import { taskBindings } from "../runner/code/task-parts.js";
import { compileUserTask, loadProblem, userTaskOf, type UserTask } from "../runner/code/user-task.js";
import { guardTask, taskDeadline, underDeadline, type GuardOptions } from "../runner/code/task-guard.js";
import { CONTRACT_VERSIONS } from "../contract/returns.js";
import { checkTaskSources, declaredEnvironment, type TaskReads } from "../runner/code/task-rules.js";
import { holdBeforeWork } from "./small-run-heap.js";

/**
 * For specs whose stages call no task (a download only): any call is a bug the planner should have caught.
 */
const NO_TASK: TaskModule = {
  contract: 2,
  buildRequests: () => {
    throw new Error("this spec names no task");
  },
  parseReply: () => {
    throw new Error("this spec names no task");
  },
  score: () => {
    throw new Error("this spec names no task");
  },
  baselines: {},
};

/** Says what is about to happen before it may take a while (loading a task's code). */
export type Progress = (message: string) => void;

/** The spec's task: a task of the user's repository (compiled here when its sources changed), or the
 *  install's compiled task; either way its functions run under the deadline of task code, their returns
 *  checked (src/runner/code/task-guard.ts). */
export async function loadTask(
  spec: SpecFile,
  projectCache?: string,
  progress?: Progress,
): Promise<{ module: TaskModule; user: UserTask | null; reads?: TaskReads }> {
  const seconds = taskDeadline();
  if (typeof seconds === "string") throw new UsageError(seconds);
  // A command that shows progress is about to work (build, verify): its heap is sized from here on.
  if (progress) holdBeforeWork();
  const user = spec.task === null ? null : userTaskOf(spec.path, spec.task, projectCache);
  if (!user) {
    const { module, reads } = await loadInstalledTask(spec);
    if (module === NO_TASK) return { module, user: null };
    const guarded = guardTask(module, guardOptions(spec, taskFolder(spec.task!), seconds));
    return { module: guarded, user: null, ...(reads ? { reads } : {}) };
  }
  // Before compiling: a refused source leaves the compiled folder (part of the cache) as it was.
  const reads = checkTaskSources(user.source, process.cwd());
  compileUserTask(user);
  const folder = relative(user.root, user.source).split("\\").join("/");
  if (!require.cache[join(user.compiled, "index.js")]) progress?.(`loading task ${spec.task} (${folder}/)…`);
  const mod = loadUnderDeadline(user, `${folder}/index.ts`, seconds) as { task?: TaskModule };
  if (!mod.task)
    throw new DiagnosticError([
      {
        file: join(user.source, "index.ts"),
        message: "the task module exports no `task`",
        fix: "export const task: TaskModule = { … } (npx medbench new-task NAME writes one to start from)",
      },
    ]);
  refuseUnknownContract(mod.task, join(user.source, "index.ts"));
  refuseBadParts(
    taskBindings(user.compiledRoot, spec.task!, mod.task, join("tasks", spec.task!)).problems,
    relative(user.root, join(user.source, "index.ts")),
  );
  declaredEnvironment(
    mod.task.environment,
    reads.env,
    relative(process.cwd(), join(user.source, "index.ts")),
  );
  return { module: guardTask(mod.task, guardOptions(spec, folder, seconds)), user, reads };
}

function guardOptions(spec: SpecFile, folder: string, seconds: number): GuardOptions {
  const published = spec.spec as Record<string, Json> | null;
  const primary = published && typeof published === "object" ? published.primary_metric : undefined;
  return { folder, primary: typeof primary === "string" ? primary : null, seconds };
}

/** A task's compiled entry module, its top level run under the deadline: a module that never finishes
 *  loading, or that fails to (a package not installed, an error thrown), is refused, naming the file. */
function loadUnderDeadline(user: UserTask, file: string, seconds: number): unknown {
  const entry = join(user.compiled, "index.js");
  try {
    return underDeadline("loading the task's modules", seconds, () => require(entry) as unknown);
  } catch (e) {
    if (e instanceof StageError) throw new DiagnosticError([{ file, message: e.message, fix: e.fix }]);
    const problem = loadProblem(user, e);
    if (problem) throw new DiagnosticError([problem]);
    throw e;
  }
}

/** A task written against a contract version this medbench does not know is refused where it says so. */
function refuseUnknownContract(task: TaskModule, file: string): void {
  const version: unknown = (task as { contract?: unknown }).contract;
  if (CONTRACT_VERSIONS.includes(version as number)) return;
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const before = text.slice(0, Math.max(0, text.indexOf("contract:"))).split("\n");
  throw new DiagnosticError([
    {
      file: relative(process.cwd(), file) || file,
      ...(text.includes("contract:") ? { line: before.length, column: before.at(-1)!.length + 1 } : {}),
      message:
        `the task says \`contract: ${JSON.stringify(version) ?? "undefined"}\`, a version this medbench ` +
        `does not know (it knows ${CONTRACT_VERSIONS.join(", ")})`,
      fix:
        `write the task against contract ${CONTRACT_VERSIONS.at(-1)} ` +
        "(src/contract/task.ts, docs/tasks.md), " +
        "or install the medbench it was written for",
    },
  ]);
}

async function loadInstalledTask(spec: SpecFile): Promise<{ module: TaskModule; reads?: TaskReads }> {
  if (spec.task === null) {
    const needs = spec.stages.find((stage) => STAGE_KINDS.get(stage.kind)?.taskParts);
    if (needs)
      throw new DiagnosticError([
        diagnosticAt(
          spec.src,
          `/stages/${needs.name}/kind`,
          `stage ${needs.name} (${needs.kind}) calls a task, and the spec names none`,
          "add `task: <name>` (a folder of tasks/)",
        ),
      ]);
    return { module: NO_TASK };
  }
  const entry = resolve(installRoot(), "dist", taskFolder(spec.task), "index.js");
  consult(entry);
  if (!TASK_PATTERN.test(spec.task) || !existsSync(entry)) {
    const known = existsSync(resolve(installRoot(), "tasks"))
      ? readdirSync(resolve(installRoot(), "tasks"), { withFileTypes: true })
          .filter((dirent) => dirent.isDirectory())
          .map((dirent) => dirent.name)
      : [];
    throw new DiagnosticError([
      diagnosticAt(
        spec.src,
        "/task",
        `unknown task \`${spec.task}\``,
        `use one of: ${known.join(", ")}, a task of this repository (tasks/${spec.task}/index.ts beside ` +
          "specs/, `npx medbench new-task NAME`), or the path of a compiled task folder of the install",
      ),
    ]);
  }
  // Before the task's code runs: a module that breaks the rules could change what is loaded after it.
  const reads = checkTaskSources(join(installRoot(), taskFolder(spec.task)), installRoot());
  const module = ((await import(entry)) as { task: TaskModule }).task;
  const indexFile = `${taskFolder(spec.task!)}/index.ts`;
  refuseUnknownContract(module, resolve(installRoot(), indexFile));
  refuseBadParts(taskBindings(installRoot(), spec.task, module).problems, indexFile);
  declaredEnvironment(module.environment, reads.env, indexFile);
  return { module, reads };
}

/** A task whose `parts` do not hold (docs/tasks.md, Parts) is refused, naming its wiring module. */
function refuseBadParts(problems: string[], file: string): void {
  if (problems.length)
    throw new DiagnosticError(
      problems.map((message) => ({
        file,
        message,
        fix:
          "name each part's module by its path in the task folder (e.g. scorer.ts), and export from it " +
          "the very value the task object holds (a wrapper written in the " +
          "wiring module belongs in the part's module), or leave the part out of `parts` (its stages are " +
          "then keyed on the whole task folder); docs/tasks.md, Parts",
      })),
    );
}

/**
 * `projectCache`: the project's cache folder, whose parsed specs (specs/) are read, never written, here, and
 * whose code memo spares rereading the install's code (saved by the command, saveCodeMemo()). `env`: what
 * the spec check may consult besides the spec (the build's --registry files; null where nothing is sent).
 */
export async function loadRuntime(
  specPath: string,
  variables: Record<string, Json>,
  projectCache?: string,
  env: CheckEnv | null = null,
  progress?: Progress,
): Promise<Runtime> {
  if (projectCache) useCodeMemo(join(projectCache, "code-memo.json"));
  checkCompiled(installRoot());
  const spec = loadSpec(specPath, variables, specPath, projectCache && join(projectCache, "specs"));
  const plan = planStages(spec, new Set(STAGE_KINDS.keys()));
  const { module, user, reads } = await loadTask(spec, projectCache, progress);
  checkSpec(spec, STAGE_KINDS, spec.task === null ? null : module, env);
  return {
    build: buildInfo(spec),
    spec,
    plan,
    kinds: new Map(STAGE_KINDS),
    task: { name: spec.task ?? "", module, user, ...(reads ? { reads: reads.byFile } : {}) },
  };
}

export function buildInfo(spec: SpecFile): BuildInfo {
  return {
    slug: spec.slug,
    version: spec.version,
    specHash: spec.specHash,
    medbench: medbenchVersion(),
    recipe: HASH_RECIPE,
    variables: spec.variables,
  };
}
