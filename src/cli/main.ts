// medbench: the command line. Commands print results on stdout, progress and errors on stderr.
// This module only dispatches: each command (src/cli/commands/) owns its help, options and output, and
// loads what it needs when it runs, so that start-up stays close to Node's own.
import { DiagnosticError, formatDiagnostic, type Diagnostic } from "../spec/diagnostic.js";
import { BuildFailure } from "../runner/failure.js";
import { paint, useColour } from "../log/loggers.js";
import { compileFix, installRoot, medbenchVersion } from "../util/paths.js";
import { dirname, join, relative, resolve, sep } from "node:path";
import { CommandFailure, UsageError } from "./args.js";
import { COMMANDS } from "./commands/index.js";
import { visibleJson, visibleLines } from "../util/visible.js";

async function mainHelp(): Promise<string> {
  const commands = [...COMMANDS.values()];
  // A long synopsis puts its summary on the next line, so that every line stays narrow.
  const width = 20;
  const lines = commands.map((command) =>
    command.synopsis.length < width - 1
      ? `  ${command.synopsis.padEnd(width)}${command.summary}`
      : `  ${command.synopsis}\n  ${"".padEnd(width)}${command.summary}`,
  );
  return `medbench ${medbenchVersion()}: reproducible builds of medical LLM benchmarks

usage: medbench <command> [options]

commands:
${lines.join("\n")}

medbench <command> --help for its options.
Exit codes: 0 ok, 1 a build failed or is incomplete (rerun it to retry), 2 bad usage or a bad spec.`;
}

export async function main(argv: string[]): Promise<number> {
  // Task code's dates read the process's time zone, which no key holds: every build runs in one.
  process.env.TZ = "UTC";
  const [name, ...rest] = argv;
  try {
    if (!name || name === "--help" || name === "-h" || name === "help") {
      process.stdout.write((await mainHelp()) + "\n");
      return name ? 0 : 2;
    }
    if (name === "--version") {
      process.stdout.write(medbenchVersion() + "\n");
      return 0;
    }
    const load = COMMANDS.get(name)?.load;
    if (!load) {
      if (rest.includes("--help") || rest.includes("-h")) {
        process.stdout.write((await mainHelp()) + "\n");
        return 2;
      }
      throw new UsageError(`unknown command ${JSON.stringify(name)}\n\n${await mainHelp()}`);
    }
    const { command } = await load();
    if (rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(command.help.replace("<version>", medbenchVersion()) + "\n");
      return 0;
    }
    return await command.run(rest);
  } catch (e) {
    const exit = reportError(e);
    // `--json`: a CI consumer gets one object to parse on failure too (what, where, how to fix it).
    if (wantsJson(rest))
      process.stdout.write(visibleJson(JSON.stringify({ error: errorObject(e, name ?? "", exit) })) + "\n");
    return exit;
  }
}

/** Whether `--json` is among the flags (not after `--`, where it would be an argument). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
}

/** A failure as `--json` prints it: a code, the message, how to fix it, where (file:line:column), exit. */
export function errorObject(e: unknown, command: string, exit: number) {
  const where = (d: { file: string; line?: number; column?: number }) =>
    d.line ? `${d.file}:${d.line}:${d.column ?? 1}` : d.file;
  if (e instanceof DiagnosticError) {
    const said = (d: Diagnostic) => (d.key ? `${d.key}: ${d.message}` : d.message);
    const [first, ...more] = e.diagnostics;
    return {
      code: "bad-spec",
      message: first ? said(first) : e.message,
      fix: first?.fix ?? null,
      location: first ? where(first) : null,
      exit,
      more: more.map((d) => ({ message: said(d), fix: d.fix ?? null, location: where(d) })),
    };
  }
  if (e instanceof UsageError) {
    const message = e.message.split("\n\n")[0]!;
    const fix = `medbench ${command} --help lists its arguments and options`;
    return { code: "bad-usage", message, fix, location: null, exit };
  }
  if (e instanceof BuildFailure)
    return { code: "build-failed", message: e.message, fix: e.fix ?? null, location: e.stage, exit };
  if (e instanceof CommandFailure)
    return { code: "failed", message: e.message, fix: e.fix, location: null, exit };
  const full = diskFull(e);
  if (full) return { code: "disk-full", message: full.message, fix: full.fix, location: full.path, exit };
  return {
    code: "internal",
    message: e instanceof Error ? e.message : String(e),
    fix: null,
    location: null,
    exit,
  };
}

/** A write the disk had no room for (ENOSPC, EDQUOT), wherever it happened: not a bug, a full disk. */
function diskFull(e: unknown): { message: string; fix: string; path: string | null } | null {
  const err = e as NodeJS.ErrnoException | null;
  if (err?.code !== "ENOSPC" && err?.code !== "EDQUOT") return null;
  return {
    message: `no space left on the device (${err.code}${err.path ? ` writing ${err.path}` : ""})`,
    fix: "free some disk space and run again (what was built before is kept)",
    path: err.path ?? null,
  };
}

/** A user mistake is one clear message (exit 2); a failed build says that nothing was recorded (exit 1). */
function reportError(e: unknown): number {
  const c = paint(useColour(process.stderr));
  if (e instanceof DiagnosticError) {
    const text = visibleLines(e.diagnostics.map(formatDiagnostic).join("\n\n"));
    process.stderr.write(text.replace(/^error:/gm, c.red("error:")) + "\n");
    return 2;
  }
  // A message may quote what the user or a bundle gave (a member's name): shown, never obeyed by a terminal.
  if (e instanceof UsageError) {
    process.stderr.write(`${c.red("error:")} ${visibleLines(e.message)}\n`);
    return 2;
  }
  if (e instanceof BuildFailure) {
    const where = ["lock", "results", "shard"].includes(e.stage) ? "" : `stage ${e.stage}: `;
    process.stderr.write(
      `${c.red("error:")} ${where}${visibleLines(e.message)}\n` +
        (e.fix ? `  fix: ${visibleLines(e.fix)}\n` : "") +
        "nothing was recorded: medbench.lock and earlier results are as they were\n",
    );
    return 1;
  }
  if (e instanceof CommandFailure) {
    process.stderr.write(`${c.red("error:")} ${visibleLines(e.message)}\n  fix: ${visibleLines(e.fix)}\n`);
    return 1;
  }
  const full = diskFull(e);
  if (full) {
    process.stderr.write(`${c.red("error:")} ${full.message}\n  fix: ${full.fix}\n`);
    return 1;
  }
  const missing = missingCompiled(e);
  if (missing !== null) {
    process.stderr.write(
      `${c.red("error:")} medbench's compiled code is incomplete: ${missing} is missing\n` +
        `  fix: ${compileFix(installRoot())}\n`,
    );
    return 2;
  }
  process.stderr.write(
    `internal error (a bug in medbench; please report it):\n${e instanceof Error ? e.stack : String(e)}\n`,
  );
  return 1;
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
