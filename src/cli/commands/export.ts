// medbench export RESULT -o F.tar.gz: pack a result with its spec, records and outputs.
import { closeSync, existsSync, openSync, readSync, statSync } from "../../util/builtins.js";
import { dirname, resolve } from "node:path";
import { parse, UsageError } from "../args.js";
import { usageError, type Command } from "../command.js";
import { BUILD_OPTIONS, buildOptions } from "../options.js";

export const command: Command = {
  help: `usage: medbench export RESULT -o FILE.tar.gz [--project DIR] [--json]

  RESULT is a results directory of a full build of this project (e.g. results/<slug>/<model>).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...BUILD_OPTIONS, output: { type: "string", short: "o" } });
  if (positionals.length !== 1 || !values.output)
    throw usageError(command, "export takes a result directory and -o FILE.tar.gz");
  const { opts } = buildOptions(values);
  checkOutput(values.output as string);
  const { exportResult } = await import("../../bundle/export.js");
  const out = await exportResult(positionals[0]!, values.output as string, opts);
  process.stdout.write(values.json ? JSON.stringify({ bundle: out }) + "\n" : `${out}\n`);
  return 0;
}

/** -o names a new file or an earlier bundle (a gzip file): never a folder, a missing folder's file, or any
 *  other existing file (medbench.lock, a spec, a result), which a tarball would destroy. */
function checkOutput(output: string): void {
  const path = resolve(output);
  if (!existsSync(dirname(path)) || !statSync(dirname(path)).isDirectory())
    throw new UsageError(`-o ${output}: the folder ${dirname(output)} does not exist (create it first)`);
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory())
    throw new UsageError(`-o ${output} is a folder: name the bundle file, e.g. -o ${output}/result.tar.gz`);
  const head = Buffer.alloc(2);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, 2, 0);
  } finally {
    closeSync(fd);
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b)
    throw new UsageError(
      `-o ${output} exists and is not a bundle: refusing to overwrite it (name a new .tar.gz file)`,
    );
}
