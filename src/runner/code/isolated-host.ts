// The process an isolated stage runs in (src/runner/code/isolation.ts starts it): it receives the stage's
// job, closes what isolation closes (./sandbox.ts), loads the stage kind and only the task modules its key
// holds, runs the stage and sends back its outputs. Its environment holds the task's declared variables
// alone, and Node's permission model lets it read only the files of its key and its inputs.
// First: it makes fsync a no-op before medbench's fs wrappers load (./sandbox.ts).
import { Closed, lockDown, refusedReads, seedDraws } from "./sandbox.js";
import { createHash, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import type { DataSource, InputView, StageContext, StageKind, StageOutput } from "../../contract/stage.js";
import type { BuildEvent } from "../../contract/events.js";
import type { TaskModule } from "../../contract/task.js";
import { StageError } from "../../errors.js";
import { guardTask, prepareDeadline } from "./task-guard.js";
import type { IsolatedJob, IsolatedTask, HostMessage } from "./isolation-job.js";
import { FUNCTION_MARK } from "./isolation-job.js";

const send = (message: HostMessage): void => void process.send!(message);
/** The last message, whole in the channel before it closes (a large one is written in parts). */
const sendLast = (message: HostMessage): Promise<void> =>
  new Promise((done) => process.send!(message, undefined, {}, () => done()));

/** A value of the job's task declarations, with each function a stub until its part's module binds it. */
function revive(value: unknown, path: string): unknown {
  if (value === FUNCTION_MARK)
    return () => {
      throw new StageError(
        `the task's ${path} is not a part this stage calls, so its code is not in this stage's key`,
        "declare the part the stage calls in the task's `parts` (docs/tasks.md, Parts)",
      );
    };
  if (Array.isArray(value)) return value.map((item, i) => revive(item, `${path}[${i}]`));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, revive(item, path ? `${path}.${name}` : name)]),
    );
  return value;
}

/** The task object of the stage: its declarations, and the functions of the parts it calls, taken from the
 *  modules its key holds (or the whole task when a part is keyed on the whole folder). */
function taskOf(job: IsolatedTask): TaskModule {
  if (job.whole) return guardTask((require(job.whole) as { task: TaskModule }).task, job.guard);
  const task = revive(job.declared, "") as TaskModule & Record<string, unknown>;
  for (const binding of job.modules) {
    const exports = require(binding.module) as Record<string, unknown>;
    for (const [member, name] of Object.entries(binding.exports)) {
      if (binding.part.startsWith("baseline ")) {
        const baseline = task.baselines[binding.part.slice("baseline ".length)] as unknown as Record<
          string,
          unknown
        >;
        baseline[member] = exports[name];
      } else task[member] = exports[name];
    }
  }
  return guardTask(task, job.guard);
}

function inputView(input: IsolatedJob["inputs"][string]): InputView {
  const pathOf = (name?: string): string => {
    if (input.file !== undefined) return input.file;
    const names = Object.keys(input.paths);
    const chosen = name ?? (names.length === 1 ? names[0]! : "");
    const path = input.paths[chosen];
    if (path === undefined) throw new StageError(`the input has no output ${chosen || "(unnamed)"}`);
    return path;
  };
  return {
    hashes: input.hashes,
    read: (name) => readFileSync(pathOf(name)),
    text: (name) => readFileSync(pathOf(name), "utf8"),
    path: pathOf,
    ...(input.source !== undefined ? { source: input.source as DataSource | null } : {}),
  };
}

const unavailable = (what: string) =>
  new Proxy(
    {},
    {
      get() {
        throw new Error(`internal: an isolated stage has no ${what}`);
      },
    },
  );

function contextOf(job: IsolatedJob, task: TaskModule): StageContext {
  let temps = 0;
  return {
    stage: job.stage,
    build: job.build,
    params: job.params,
    inputs: Object.fromEntries(Object.entries(job.inputs).map(([name, input]) => [name, inputView(input)])),
    task,
    options: { ...job.options, env: job.env, routes: unavailable("model routes") as never },
    pins: unavailable("release pins") as never,
    memo: unavailable("reply store") as never,
    tempPath: () => join(job.tmp, `out-${temps++}`),
    hashFile: async (path) => createHash("sha256").update(readFileSync(path)).digest("hex"),
    emit: (event: BuildEvent) => send({ type: "emit", event }),
    incomplete: (reason) => send({ type: "incomplete", reason }),
  };
}

/** The stage kind `name` that the module exports (dist/stages/<kind>.js). */
function kindOf(module: string, name: string): StageKind {
  const exports = require(module) as Record<string, unknown>;
  const found = Object.values(exports).find(
    (value) => (value as StageKind | null)?.kind === name && typeof (value as StageKind).run === "function",
  );
  if (!found) throw new Error(`internal: ${module} exports no stage kind ${name}`);
  return found as StageKind;
}

function failure(e: unknown): HostMessage {
  const error = e as { message?: unknown; fix?: unknown; code?: unknown; resource?: unknown } | null;
  return {
    type: "failed",
    message: String(error?.message ?? e),
    ...(typeof error?.fix === "string" ? { fix: error.fix } : {}),
    known: e instanceof StageError || e instanceof Closed,
    reads: [...refusedReads],
  };
}

/** V8 optimises a function once it has run for this long (its default is 67,584). The process lives for one
 *  stage: at the default, much of its CPU went to optimising code that had little left to run (three stages
 *  of a 2,070-item build: 105 ms less of 780; at 20,010 items the same CPU within noise; a budget 4x higher
 *  cost 7 % there). docs/performance.md, "Task code isolated". */
const OPTIMISE_AFTER = 2_200_000;

/** Set once the process has loaded its built-ins and modules, not on its command line: a V8 flag away from
 *  its default makes Node compile each built-in loaded after it without its code cache (11 ms a process). */
function optimiseLater(): void {
  (require("node:v8") as typeof import("node:v8")).setFlagsFromString(
    `--interrupt-budget=${OPTIMISE_AFTER}`,
  );
}

/** What the process does before its job arrives (it is started ahead of its stage): it closes what isolation
 *  closes, then loads its stage kind (its module and name are its arguments). Only the task's modules, the
 *  key's draws and the stage's work are left for the job. */
function prepare(): StageKind | Error {
  try {
    prepareDeadline(); // its V8 context is made before new ones are closed
    lockDown();
    const [module, name] = process.argv.slice(2);
    return kindOf(module!, name!);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

const prepared = prepare();

async function runJob(job: IsolatedJob): Promise<void> {
  try {
    if (prepared instanceof Error) throw prepared;
    if (prepared.kind !== job.kind)
      throw new Error(`internal: a process started for stage kind ${prepared.kind} was given ${job.kind}`);
    seedDraws(job.key);
    const task = job.task ? taskOf(job.task) : (unavailable("task") as TaskModule);
    optimiseLater();
    const produced = await prepared.run(contextOf(job, task));
    if (refusedReads.length) return sendLast(failure(new Error("a read outside the stage's key")));
    const outputs: Record<string, StageOutput> = {};
    for (const [name, output] of Object.entries(produced)) outputs[name] = output;
    await sendLast({ type: "done", outputs });
  } catch (e) {
    await sendLast(failure(e));
  }
}

process.once("message", (job: IsolatedJob) => {
  void runJob(job).then(() => process.disconnect());
});
