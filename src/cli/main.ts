// medbench: the command line. Commands print results on stdout, progress and errors on stderr.
// This module only dispatches: each command (src/cli/commands/) owns its help, options and output, and
// loads what it needs when it runs, so that start-up stays close to Node's own.
import { paint, useColour } from "../log/loggers.js";
import { medbenchVersion } from "../util/paths.js";
import { reportedFailure, UsageError } from "../errors.js";
import { COMMANDS } from "./commands/index.js";
import { visibleJson } from "../util/visible.js";

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
      throw new UsageError(`unknown command ${JSON.stringify(name)}\n\n${await mainHelp()}`, nearest(name));
    }
    const { command } = await load();
    if (rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(command.help.replace("<version>", medbenchVersion()) + "\n");
      return 0;
    }
    return await command.run(rest);
  } catch (e) {
    const failure = reportedFailure(e, name ?? "", paint(useColour(process.stderr)).red);
    process.stderr.write(failure.text);
    // `--json`: a CI consumer gets one object to parse on failure too (what, where, how to fix it).
    if (wantsJson(rest)) process.stdout.write(visibleJson(JSON.stringify({ error: failure.json })) + "\n");
    return failure.exit;
  }
}

/** The fix of an unknown command: the command it is closest to (a typo: at most 2 edits, and fewer than
 *  half its letters), else where the commands are listed. */
function nearest(name: string): string {
  let best: { command: string; distance: number } | null = null;
  for (const command of COMMANDS.keys()) {
    const distance = editDistance(name, command);
    if (!best || distance < best.distance) best = { command, distance };
  }
  if (best && best.distance <= 2 && best.distance * 2 < Math.max(name.length, best.command.length))
    return `did you mean \`medbench ${best.command}\`? (\`medbench --help\` lists the commands)`;
  return "`medbench --help` lists the commands";
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(left: string, right: string): number {
  let row = Array.from({ length: right.length + 1 }, (_cell, i) => i);
  for (let i = 1; i <= left.length; i++) {
    const next = [i];
    for (let column = 1; column <= right.length; column++)
      next[column] = Math.min(
        row[column]! + 1,
        next[column - 1]! + 1,
        row[column - 1]! + (left[i - 1] === right[column - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[right.length]!;
}

/** Whether `--json` is among the flags (not after `--`, where it would be an argument). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
}
