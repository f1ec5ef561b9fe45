// The failures medbench reports to its user, and the one place that maps a thrown value to an exit code,
// a message on stderr and the `--json` error object. Anything else that is thrown is a bug in medbench.
import { dirname, join, relative, resolve, sep } from "node:path";
import { compileFix, installRoot } from "./util/paths.js";
import { visibleLines } from "./util/visible.js";

/** A user-facing problem with a file: what went wrong, where (file:line:column), and how to fix it. */
export interface Diagnostic {
  file: string;
  line?: number; // 1-based
  column?: number; // 1-based
  length?: number; // characters to underline
  key?: string; // dotted path of the offending key, e.g. stages.score.kind
  message: string;
  fix?: string;
  sourceLine?: string;
}

/** A bad spec (or another file the user wrote): exit 2, each diagnostic with its place and fix. */
export class DiagnosticError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map((diagnostic) => diagnostic.message).join("; "));
  }
}

/** Fails with a user-facing diagnostic (caught by the CLI, never printed as a stack trace). */
export function fail(diagnostic: Diagnostic): never {
  throw new DiagnosticError([diagnostic]);
}

export function formatDiagnostic(diagnostic: Diagnostic): string {
  const { file, line, column, sourceLine, fix } = diagnostic;
  const where = line ? `${file}:${line}:${column ?? 1}` : file;
  const key = diagnostic.key ? ` ${diagnostic.key}:` : "";
  const lines = [`error: ${where}:${key} ${diagnostic.message}`];
  if (line && sourceLine !== undefined) {
    const gutter = String(line);
    lines.push(`  ${gutter} | ${sourceLine}`);
    const pad = " ".repeat(Math.max(0, (column ?? 1) - 1));
    lines.push(`  ${" ".repeat(gutter.length)} | ${pad}${"^".repeat(Math.max(1, diagnostic.length ?? 1))}`);
  }
  if (fix) lines.push(`  fix: ${fix}`);
  return lines.join("\n");
}

/** `build --batch` without `--wait` that submitted provider batches: not a failure, not done either (exit
 *  3):
 *  a later build collects the batches (docs/model-requests.md, "Batches"). The one exit code of its kind. */
export const BATCHES_PENDING_EXIT = 3;

/** Bad usage of a command (an unknown flag, a missing argument): exit 2. */
/** A mistake in how a command was called (exit 2). `fix`: how to call it instead, when the command knows
 *  better than its --help (a misspelt command's nearest name). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

/** A command that could not do its job for a reason outside the user's input (an unreachable remote):
 *  exit 1, the message and how to fix it; with --json, the `{"error": …}` object (code `failed`). */
export class CommandFailure extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

/** A build that could not finish: which stage, what happened, how to fix it (exit 1, no stack trace). */
export class BuildFailure extends Error {
  constructor(
    readonly stage: string,
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

/** A stage kind's own failure (bad parameters, a bad input): the runner reports it as a BuildFailure. */
export class StageError extends Error {
  constructor(
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

/** A failure as `--json` prints it: a code, the message, how to fix it, where (file:line:column), exit. */
export interface ErrorObject {
  code: string;
  message: string;
  fix: string | null;
  location: string | null;
  exit: number;
  more?: { message: string; fix: string | null; location: string }[];
}

/** A failure as the user sees it: the exit code, the text for stderr and the `--json` error object. */
export interface ReportedFailure {
  exit: number;
  text: string;
  json: ErrorObject;
}

type Paint = (text: string) => string;
type Described = Omit<ErrorObject, "exit"> & { exit: number; text: string };

/**
 * The one mapping from a thrown value to what the user sees: a user mistake is one clear message (exit 2);
 * a failed build says that nothing was recorded (exit 1); anything unknown is a bug (exit 1, its stack).
 * `command` is the command as typed; `red` colours the "error:" label (or leaves it as it is).
 */
export function reportedFailure(e: unknown, command: string, red: Paint): ReportedFailure {
  const described =
    diagnosticFailure(e, red) ??
    usageFailure(e, command, red) ??
    buildFailure(e, red) ??
    commandFailure(e, red) ??
    diskFullFailure(e, red) ??
    missingCompiledFailure(e, red) ??
    internalFailure(e);
  const { exit, text, ...fields } = described;
  const { more, ...first } = fields;
  const json = more ? { ...first, exit, more } : { ...first, exit };
  return { exit, text, json };
}

const where = (diagnostic: Diagnostic) =>
  diagnostic.line ? `${diagnostic.file}:${diagnostic.line}:${diagnostic.column ?? 1}` : diagnostic.file;

function diagnosticFailure(e: unknown, red: Paint): Described | null {
  if (!(e instanceof DiagnosticError)) return null;
  const text = visibleLines(e.diagnostics.map(formatDiagnostic).join("\n\n"));
  const said = (diagnostic: Diagnostic) =>
    diagnostic.key ? `${diagnostic.key}: ${diagnostic.message}` : diagnostic.message;
  const [first, ...more] = e.diagnostics;
  return {
    code: "bad-spec",
    message: first ? said(first) : e.message,
    fix: first?.fix ?? null,
    location: first ? where(first) : null,
    more: more.map((diagnostic) => ({
      message: said(diagnostic),
      fix: diagnostic.fix ?? null,
      location: where(diagnostic),
    })),
    exit: 2,
    text: text.replace(/^error:/gm, red("error:")) + "\n",
  };
}

// A message may quote what the user or a bundle gave (a member's name): shown, never obeyed by a terminal.
function usageFailure(e: unknown, command: string, red: Paint): Described | null {
  if (!(e instanceof UsageError)) return null;
  // A message may carry its fix on a line of its own ("  fix: …"): with --json, that is the `fix` field.
  const [head, ...more] = e.message.split("\n\n");
  const [message, written] = head!.split(/\n\s*fix: /);
  const fix = e.fix ?? written ?? `medbench ${command} --help lists its arguments and options`;
  const said = e.fix && !written ? [`${head}\n  fix: ${e.fix}`, ...more].join("\n\n") : e.message;
  const text = `${red("error:")} ${visibleLines(said)}\n`;
  return { code: "bad-usage", message: message!, fix, location: null, exit: 2, text };
}

function buildFailure(e: unknown, red: Paint): Described | null {
  if (!(e instanceof BuildFailure)) return null;
  const where = ["lock", "results", "shard"].includes(e.stage) ? "" : `stage ${e.stage}: `;
  const text =
    `${red("error:")} ${where}${visibleLines(e.message)}\n` +
    (e.fix ? `  fix: ${visibleLines(e.fix)}\n` : "") +
    "nothing was recorded: medbench.lock and earlier results are as they were\n";
  return { code: "build-failed", message: e.message, fix: e.fix ?? null, location: e.stage, exit: 1, text };
}

function commandFailure(e: unknown, red: Paint): Described | null {
  if (!(e instanceof CommandFailure)) return null;
  const text = `${red("error:")} ${visibleLines(e.message)}\n  fix: ${visibleLines(e.fix)}\n`;
  return { code: "failed", message: e.message, fix: e.fix, location: null, exit: 1, text };
}

/** A write the disk had no room for (ENOSPC, EDQUOT), wherever it happened: not a bug, a full disk. */
function diskFullFailure(e: unknown, red: Paint): Described | null {
  const err = e as NodeJS.ErrnoException | null;
  if (err?.code !== "ENOSPC" && err?.code !== "EDQUOT") return null;
  const message = `no space left on the device (${err.code}${err.path ? ` writing ${err.path}` : ""})`;
  const fix = "free some disk space and run again (what was built before is kept)";
  const text = `${red("error:")} ${message}\n  fix: ${fix}\n`;
  return { code: "disk-full", message, fix, location: err.path ?? null, exit: 1, text };
}

function missingCompiledFailure(e: unknown, red: Paint): Described | null {
  const missing = missingCompiled(e);
  if (missing === null) return null;
  const text =
    `${red("error:")} medbench's compiled code is incomplete: ${missing} is missing\n` +
    `  fix: ${compileFix(installRoot())}\n`;
  return { ...internalFailure(e), exit: 2, text };
}

function internalFailure(e: unknown): Described {
  const text =
    `internal error (a bug in medbench; please report it):\n` +
    `${e instanceof Error ? e.stack : String(e)}\n`;
  const message = e instanceof Error ? e.message : String(e);
  return { code: "internal", message, fix: null, location: null, exit: 1, text };
}

/** The compiled module that a require found missing from dist/ (removed, or never compiled), if so. */
function missingCompiled(e: unknown): string | null {
  const err = e as { code?: unknown; message?: unknown; requireStack?: unknown } | null;
  if (err?.code !== "MODULE_NOT_FOUND" && err?.code !== "ERR_MODULE_NOT_FOUND") return null;
  const request = /Cannot find module '([^']+)'/.exec(String(err.message))?.[1];
  if (!request) return null;
  // CommonJS names the request as written (./parser.js) and the requiring file first in its stack.
  const from = Array.isArray(err.requireStack) ? String(err.requireStack[0]) : null;
  const path = from && request.startsWith(".") ? resolve(dirname(from), request) : request;
  const dist = join(installRoot(), "dist");
  return path.startsWith(dist + sep) ? relative(installRoot(), path) : null;
}
