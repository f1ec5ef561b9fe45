// Task code is the task author's, run inside medbench's process: each call runs under a deadline (an endless
// loop ends the build instead of hanging it), a call to process.exit is a failed call (not a build that ends
// with exit 0 and no results), and what buildRequests and score return is checked against the contract
// (src/contract/returns.ts) before a stage writes it. The deadline is V8's own (node:vm's `timeout`, which
// stops any synchronous code running under it, the task's own functions included): no worker, no copy of
// the stage's inputs. Task functions are synchronous by the contract, so the whole call is under it.
import type { Context, Script } from "node:vm";
import { StageError } from "../../errors.js";
import { parseProblems, requestProblems, scoreProblems } from "../../contract/returns.js";
import type { Baseline, ParsedReply, ParseInput, TaskModule, TaskParts } from "../../contract/task.js";

/** The environment variable that sets the deadline, in seconds, of each call of task code. */
export const DEADLINE_ENV = "MEDBENCH_TASK_DEADLINE";
/** Ten minutes a call: far beyond any task's scorer on a slow machine, short of forever. */
export const DEFAULT_DEADLINE_SECONDS = 600;

/** The deadline of each call of task code, in seconds (MEDBENCH_TASK_DEADLINE), or a message saying why the
 *  variable's value is no deadline. */
export function taskDeadline(env: Record<string, string | undefined> = process.env): number | string {
  const raw = env[DEADLINE_ENV]?.trim();
  if (raw === undefined || raw === "") return DEFAULT_DEADLINE_SECONDS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds * 1000 > 2 ** 31 - 1)
    return (
      `${DEADLINE_ENV}=${raw} is no deadline: give a number of seconds above 0 and below 2147483 ` +
      `(default ${DEFAULT_DEADLINE_SECONDS})`
    );
  return seconds;
}

/** Makes the deadline's V8 context now (an isolated stage closes new contexts before task code loads). */
export function prepareDeadline(): void {
  vmOnce();
}

/** A task function's call ended the process (process.exit): refused as the call's failure. */
class TaskExit extends Error {}

let vmParts: { context: Context; script: Script } | undefined;
function vmOnce(): { context: Context; script: Script } {
  if (vmParts) return vmParts;
  const vm = require("node:vm") as typeof import("node:vm");
  return (vmParts = { context: vm.createContext({ call: null }), script: new vm.Script("call()") });
}

/**
 * `run()` under the deadline (none when `seconds` is null), with process.exit refused while it runs. `what`
 * names the code for the messages (`tasks/t1/scorer.ts: score()`). A deadline passed or an exit throws a
 * StageError.
 */
export function underDeadline<T>(what: string, seconds: number | null, run: () => T): T {
  const exit = process.exit;
  process.exit = ((code?: number | string | null) => {
    throw new TaskExit(`${what} called process.exit(${code ?? ""})`);
  }) as typeof process.exit;
  try {
    if (seconds === null) return run();
    const { context, script } = vmOnce();
    context.call = run;
    return script.runInContext(context, { timeout: Math.max(1, Math.round(seconds * 1000)) }) as T;
  } catch (e) {
    if ((e as { code?: unknown } | null)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
      throw new PastDeadline(
        `${what} did not finish within ${seconds} s, the deadline of task code (an endless loop?)`,
        `correct the task's code; a task that needs longer sets ${DEADLINE_ENV}=SECONDS (docs/tasks.md)`,
      );
    if (e instanceof TaskExit)
      throw new StageError(
        `${e.message}: task code may not end medbench's process, so nothing was built`,
        "return the result, or throw an Error that says what went wrong",
      );
    throw e;
  } finally {
    if (vmParts) vmParts.context.call = null;
    process.exit = exit;
  }
}

/** The failure underDeadline throws when a call passes the deadline. */
class PastDeadline extends StageError {}

/**
 * `fn` on each of `args` in turn, each call under the deadline exactly as underDeadline would put it, with
 * one watchdog for a run of calls instead of one a call (a watchdog is a thread: 2,070 of them cost a
 * build about 45 ms of CPU and 45,000 system calls). When a run passes the deadline, the call it was in
 * is made again alone, under a deadline of its own: only a call that passes it alone fails. Task
 * functions compute from their arguments alone (docs/records.md), so a call made again gives the same.
 */
export function eachUnderDeadline<A, R>(
  what: string,
  seconds: number | null,
  fn: (arg: A) => R,
  args: A[],
): R[] {
  const out: R[] = [];
  while (out.length < args.length) {
    const from = out.length;
    try {
      underDeadline(what, seconds, () => {
        for (let i = from; i < args.length; i++) out.push(fn(args[i]!));
      });
    } catch (e) {
      if (!(e instanceof PastDeadline) || out.length === from) throw e;
      out.push(underDeadline(what, seconds, () => fn(args[out.length]!)));
    }
  }
  return out;
}

const batched = new WeakMap<TaskModule, (inputs: ParseInput[]) => ParsedReply[]>();

/** The task's parseReply on each input, as a guarded task runs it (eachUnderDeadline), or plainly. */
export function parseEach(task: TaskModule, inputs: ParseInput[]): ParsedReply[] {
  const each = batched.get(task);
  return each ? each(inputs) : inputs.map((input) => task.parseReply(input));
}

/** The module of the task folder a part is declared in (TaskParts), or the wiring module. */
function partFile(parts: TaskParts, part: Exclude<keyof TaskParts, "baselines">): string {
  return parts[part] ?? "index.ts";
}

function baselineFile(parts: TaskParts, name: string): string {
  const baselines = parts.baselines;
  return (typeof baselines === "string" ? baselines : baselines?.[name]) ?? "index.ts";
}

/** Refuses a return the contract does not allow, naming the function and its file. */
function refuse(what: string, problems: string[]): void {
  if (problems.length)
    throw new StageError(
      `${what} ${problems.join("; ")}`,
      "correct the task's code (the contract: src/contract/task.ts, docs/tasks.md)",
    );
}

export interface GuardOptions {
  /** The task folder as the user names it (tasks/t1): messages name its files. */
  folder: string;
  /** The spec's primary_metric, which every score must return (null when the spec names none). */
  primary: string | null;
  /** Seconds each call may take (taskDeadline()). */
  seconds: number;
}

/**
 * The task with each function run under the deadline and its returns checked. The task object stays the
 * same in everything else (its declarations, its parts): `unguarded` gives back the module itself.
 */
export function guardTask(task: TaskModule, options: GuardOptions): TaskModule {
  const parts = task.parts ?? {};
  const at = (file: string, fn: string) => `${options.folder}/${file}: ${fn}()`;
  const wrap =
    <A extends unknown[], R>(
      what: string,
      fn: (...args: A) => R,
      check?: (returned: R) => string[],
      seconds: number | null = options.seconds,
    ) =>
    (...args: A): R => {
      const out = underDeadline(what, seconds, () => fn(...args));
      if (check) refuse(what, check(out));
      return out;
    };
  const guarded: TaskModule = {
    ...task,
    buildRequests: wrap(
      at(partFile(parts, "prompts"), "buildRequests"),
      task.buildRequests,
      requestProblems,
    ),
    parseReply: wrap(at(partFile(parts, "parse"), "parseReply"), task.parseReply, parseProblems),
    score: wrap(at(partFile(parts, "score"), "score"), task.score, (scores) =>
      scoreProblems(scores, options.primary),
    ),
    baselines: Object.fromEntries(
      Object.entries(task.baselines).map(([name, baseline]) => [
        name,
        guardBaseline(baseline, at(baselineFile(parts, name), name), wrap),
      ]),
    ),
  };
  if (task.rescore)
    guarded.rescore = wrap(at(partFile(parts, "score"), "rescore"), task.rescore, (scores) =>
      scoreProblems(scores, options.primary),
    );
  if (task.judgeRequests)
    guarded.judgeRequests = wrap(at(partFile(parts, "judge"), "judgeRequests"), task.judgeRequests);
  if (task.statistics)
    guarded.statistics = Object.fromEntries(
      Object.entries(task.statistics).map(([name, statistic]) => [
        name,
        // Called once a resample (tens of thousands of times a build), where the deadline's own cost
        // (a watchdog thread a call, about 30 us) would add seconds: only an exit is refused there.
        wrap(at(partFile(parts, "statistics"), `statistics.${name}`), statistic, undefined, null),
      ]),
    );
  const parse = at(partFile(parts, "parse"), "parseReply");
  batched.set(guarded, (inputs) => {
    const parsed = eachUnderDeadline(parse, options.seconds, task.parseReply, inputs);
    for (const one of parsed) refuse(parse, parseProblems(one));
    return parsed;
  });
  originals.set(guarded, task);
  guardOptions.set(guarded, options);
  return guarded;
}

type Wrap = <A extends unknown[], R>(what: string, fn: (...args: A) => R) => (...args: A) => R;

function guardBaseline(baseline: Baseline, what: string, wrap: Wrap): Baseline {
  const name = what.replace(/\(\)$/, "");
  return {
    ...baseline,
    reply: wrap(`${name}.reply()`, baseline.reply),
    ...(baseline.fit ? { fit: wrap(`${name}.fit()`, baseline.fit) } : {}),
  };
}

const originals = new WeakMap<TaskModule, TaskModule>();
const guardOptions = new WeakMap<TaskModule, GuardOptions>();

/** The options a task was guarded with (an isolated stage guards its own copy the same way). */
export function guardedWith(task: TaskModule): GuardOptions {
  const options = guardOptions.get(task);
  if (!options) throw new Error("internal: an isolated stage's task was not guarded");
  return options;
}

/** The task module a guarded one wraps (itself when it is none): its parts are checked and keyed by the
 *  identity of its own functions (src/runner/code/task-parts.ts). */
export function unguarded(task: TaskModule): TaskModule {
  return originals.get(task) ?? task;
}
