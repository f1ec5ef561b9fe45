// Task code runs isolated: a stage that calls it runs whole in a process of its own (one a stage run, not
// one an item), started with Node's permission model so that it reads only the files its key holds (the
// code it loads, its inputs' cache objects) and writes only its own temporary folder, with no child
// process, worker, addon or inspector, and with only the task's declared variables in its environment;
// ./sandbox.ts closes the network, the clock and randomness inside it. docs/records.md, "Task code runs
// isolated", says what this covers and what it does not.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, fsyncSync, openSync } from "../../util/builtins.js";
import type { Socket } from "node:net";
import { relative, resolve } from "node:path";
import { staysInside } from "../../util/paths.js";
import { StageError } from "../../errors.js";
import type { BuildEvent } from "../../contract/events.js";
import type { StageOutput } from "../../contract/stage.js";
import type { HostMessage, IsolatedJob } from "./isolation-job.js";

export interface IsolationHooks {
  emit(event: BuildEvent): void;
  incomplete(reason: string): void;
}

/** Node's flags: the permission model, each readable path once (a folder covers what is under it). */
export function permissionFlags(reads: string[], writes: string): string[] {
  return [
    "--experimental-permission",
    "--disable-warning=ExperimentalWarning",
    ...[...new Set(reads)].map((path) => `--allow-fs-read=${path}`),
    `--allow-fs-write=${writes}`,
  ];
}

const shown = (path: string): string => {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") ? rel : path;
};

/** A refused read as the stage's failure: the path, and what to do instead. */
function refusedRead(stage: string, reads: string[]): StageError {
  const paths = reads.map(shown);
  return new StageError(
    `stage ${stage}'s code read ${paths.join(", ")}, which its key does not hold: a stage runs isolated ` +
      'and reads only its code and its inputs (docs/records.md, "Task code runs isolated")',
    "declare what it reads: a data file as a stage input of the spec (`{ file: … }`, keyed by its " +
      "content), a table as a module of the task folder imported by name " +
      '(`import { TABLE } from "./x.js"`, ' +
      'or a JSON file: `import table from "./x.json"`); a package that reads its own files with fs cannot ' +
      "run in a stage: use one that imports them, or copy what it needs into the task folder",
  );
}

function failed(stage: string, message: Extract<HostMessage, { type: "failed" }>): Error {
  if (message.reads.length) return refusedRead(stage, message.reads);
  return message.known || message.fix !== undefined
    ? new StageError(message.message, message.fix)
    : new Error(message.message);
}

/** An output file the process names outside the folder it writes: medbench would move that file into the
 *  cache (an input's link in its inbox, a file of the project, anything medbench may move). */
function outsideFolder(stage: string, file: string): StageError {
  return new StageError(
    `stage ${stage}'s process gave ${shown(file)} as an output file, outside the folder it writes`,
    "correct the task's code: a stage's output files are the ones it writes at ctx.tempPath()",
  );
}

/** The process may not fsync (the permission model refuses it): its output files are synced here, each
 *  checked to be in its folder `tmp` first. */
function synced(
  stage: string,
  outputs: Record<string, StageOutput>,
  tmp: string,
): Record<string, StageOutput> {
  for (const output of Object.values(outputs))
    if (typeof output === "object" && !(output instanceof Uint8Array)) {
      const rel = relative(tmp, resolve(tmp, output.file));
      if (!rel || !staysInside(tmp, rel)) throw outsideFolder(stage, output.file);
      const fd = openSync(output.file, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  return outputs;
}

/** How a stage's process starts, before its inputs exist: what it may read besides its inbox and its
 *  folder (its code, the spec files it reads), and the variables it is given. */
export interface IsolatedStart {
  stage: string;
  reads: string[];
  /** The folder its inputs are linked into before its job is sent: it may read what is there. */
  inbox: string;
  /** The folder it writes its outputs in. */
  tmp: string;
  env: Record<string, string>;
  /** The host module, and its arguments: the stage kind's module and name. */
  host: string;
  args: string[];
}

/** A stage's process, started ahead of its job (its start-up off the build's critical path). */
export interface IsolatedProcess {
  /** Sends the job (its inputs in the inbox) and waits for the stage's outputs. */
  run(job: IsolatedJob, hooks: IsolationHooks): Promise<Record<string, StageOutput>>;
  /** Ends a process whose stage did not run. */
  discard(): void;
  /** Whether it has ended (killed from outside while it waited, say): a stage is then given a new one. */
  ended(): boolean;
}

type Settled = Error | Record<string, StageOutput> | null;
type Ended = { code: number | null; signal: string | null } | Error;

/** An idle process does not keep medbench's process alive; one running a job does. */
function held(child: ChildProcess, hold: boolean): void {
  const handles: ({ ref(): unknown; unref(): unknown } | null | undefined)[] = [
    child,
    child.channel,
    child.stdout as Socket | null,
    child.stderr as Socket | null,
  ];
  for (const handle of handles) hold ? handle?.ref() : handle?.unref();
}

function endedEarly(stage: string, ended: Exclude<Ended, Error>, stderr: string): StageError {
  return new StageError(
    `stage ${stage}'s process ended (${ended.signal ?? `exit ${ended.code}`}) before it gave its outputs` +
      (stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" ")}` : ""),
    "correct the task's code (it may not end or kill its process)",
  );
}

/** Starts the stage's process: Node's permission model, reading `reads`, the inbox and its folder. */
export function startIsolated(start: IsolatedStart): IsolatedProcess {
  const flags = permissionFlags([...start.reads, start.inbox, start.tmp], start.tmp);
  const child = spawn(process.execPath, [...flags, start.host, ...start.args], {
    cwd: "/",
    env: { ...start.env, TZ: "UTC" },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    serialization: "advanced",
  });
  held(child, false);
  let stderr = "";
  let hooks: IsolationHooks | null = null;
  let settled: Settled = null;
  child.stdout!.on("data", (chunk: Buffer) => process.stderr.write(chunk));
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    process.stderr.write(chunk);
  });
  child.on("message", (message: HostMessage) => {
    if (message.type === "emit") hooks?.emit(message.event);
    else if (message.type === "incomplete") hooks?.incomplete(message.reason);
    else if (message.type === "done") {
      settled ??= message.outputs;
      // Its outputs given, nothing of the process may run on (a task's stray timer would change a file
      // after it is hashed), and its teardown is not waited for: 5 to 15 ms a stage.
      child.kill("SIGKILL");
    } else settled ??= failed(start.stage, message);
  });
  const ended = new Promise<Ended>((done) => {
    child.on("error", (e) => done(e));
    child.on("close", (code, signal) => done({ code, signal }));
  });
  return {
    async run(job, given) {
      hooks = given;
      held(child, true);
      if (child.connected) child.send(job);
      const end = await ended;
      if (end instanceof Error) throw end;
      if (settled instanceof Error) throw settled;
      if (settled) return synced(start.stage, settled, start.tmp);
      throw endedEarly(start.stage, end, stderr);
    },
    discard() {
      if (!this.ended()) child.kill("SIGKILL");
    },
    ended: () => child.exitCode !== null || child.signalCode !== null,
  };
}
