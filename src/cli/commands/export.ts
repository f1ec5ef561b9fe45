// medbench export RESULT -o F.tar.gz: pack a result with its spec, records and outputs.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { parse } from "../args.js";
import { BUNDLE_OUTPUT, checkOutput } from "../output.js";
import { usageError, type Command } from "../command.js";
import { buildOptions, optionsOf } from "../options.js";

export const command: Command = {
  help: `usage: medbench export RESULT -o FILE.tar.gz [--project DIR] [--cache DIR] [--json]

  RESULT is a results directory of a full build of this project (e.g. results/<slug>/<model>).
  -o - writes the bundle to stdout (a pipe or a file, never a terminal; without --json). An existing
  file is replaced only when it is a bundle medbench wrote.`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, optionsOf("output", "project", "cache", "json"), "export");
  if (positionals.length !== 1 || !values.output)
    throw usageError(command, "export takes a result directory and -o FILE.tar.gz");
  const output = values.output as string;
  const { opts } = buildOptions(values);
  if (output === "-") checkStdout(Boolean(values.json));
  else checkOutput(output, output, BUNDLE_OUTPUT, opts.project.root);
  const { exportResult } = await import("../../bundle/export.js");
  const out = await exportResult(positionals[0]!, output, opts);
  const metrics = join(positionals[0]!, "metrics.json");
  if (existsSync(metrics) && (JSON.parse(readFileSync(metrics, "utf8")) as { partial?: unknown }).partial)
    process.stderr.write(
      "warning: a partial run (--limit or --subset): the bundle says so, and verify never accepts it as " +
        "the published result\n",
    );
  if (output !== "-")
    process.stdout.write(values.json ? JSON.stringify({ bundle: out }) + "\n" : `${out}\n`);
  return 0;
}

/** `-o -`: the bundle is stdout's only content, and compressed bytes never go to a terminal. */
function checkStdout(json: boolean): void {
  if (json)
    throw usageError(
      command,
      "-o - writes the bundle to stdout, where --json would mix its object in: drop one",
    );
  if (process.stdout.isTTY)
    throw usageError(
      command,
      "-o - writes the bundle to stdout, which is a terminal: redirect it (> result.tar.gz) or pipe it",
    );
}
