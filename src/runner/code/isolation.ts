// Task code runs isolated: a stage that calls it runs whole in a process of its own (one a stage run, not
// one an item), started with Node's permission model so that it reads only the files its key holds (the
// code it loads, its inputs' cache objects) and writes only its own temporary folder, with no child
// process, worker, addon or inspector, and with only the task's declared variables in its environment;
// ./sandbox.ts closes the network, the clock and randomness inside it. docs/records.md, "Task code runs
// isolated", says what this covers and what it does not.
import { spawn } from "node:child_process";
import { closeSync, fsyncSync, openSync } from "../../util/builtins.js";
import { relative } from "node:path";
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

/** The process may not fsync (the permission model refuses it): its output files are synced here. */
function synced(outputs: Record<string, StageOutput>): Record<string, StageOutput> {
  for (const output of Object.values(outputs))
    if (typeof output === "object" && !(output instanceof Uint8Array)) {
      const fd = openSync(output.file, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  return outputs;
}

/** Runs the job in its own process; `reads`: what it may read (files and folders), `tmp` what it writes. */
export function runIsolated(
  job: IsolatedJob,
  reads: string[],
  host: string,
  hooks: IsolationHooks,
): Promise<Record<string, StageOutput>> {
  const env: Record<string, string> = { ...job.env, TZ: "UTC" };
  const child = spawn(process.execPath, [...permissionFlags([...reads, job.tmp], job.tmp), host], {
    cwd: "/",
    env,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    serialization: "advanced",
  });
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => process.stderr.write(chunk));
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    process.stderr.write(chunk);
  });
  return new Promise((resolvePromise, reject) => {
    let settled: Error | Record<string, StageOutput> | null = null;
    child.on("message", (message: HostMessage) => {
      if (message.type === "emit") hooks.emit(message.event);
      else if (message.type === "incomplete") hooks.incomplete(message.reason);
      else if (message.type === "done") settled ??= message.outputs;
      else settled ??= failed(job.stage, message);
    });
    child.on("error", (e) => reject(e));
    child.on("close", (code, signal) => {
      if (settled instanceof Error) return reject(settled);
      if (settled) return resolvePromise(synced(settled));
      reject(
        new StageError(
          `stage ${job.stage}'s process ended (${signal ?? `exit ${code}`}) before it gave its outputs` +
            (stderr.trim() ? `: ${stderr.trim().split("\n").slice(-3).join(" ")}` : ""),
          "correct the task's code (it may not end or kill its process)",
        ),
      );
    });
    child.send(job);
  });
}
