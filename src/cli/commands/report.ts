// medbench report [SPEC...] -o F.html: one offline HTML page with every run's metrics and audit facts.
import { parse } from "../args.js";
import { usageError, type Command } from "../command.js";

export const command: Command = {
  help: `usage: medbench report [SPEC...] -o report.html [--project DIR] [--json]

  Every run under results/ of the given specs (default: every spec in specs/).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    output: { type: "string", short: "o" },
    project: { type: "string" },
    json: { type: "boolean" },
  });
  if (!values.output) throw usageError(command, "report needs -o FILE.html");
  const { writeReport } = await import("../../report/report.js");
  const out = await writeReport({
    specs: positionals,
    output: values.output,
    root: (values.project as string | undefined) ?? process.cwd(),
  });
  if (values.json)
    process.stdout.write(
      JSON.stringify({ report: out.file, runs: out.runs, tasks: out.tasks, broken: out.broken }) + "\n",
    );
  else {
    process.stdout.write(`${out.file}: ${out.runs} runs of ${out.tasks} tasks\n`);
    for (const b of out.broken) process.stderr.write(`warning: broken run, listed as such: ${b}\n`);
  }
  return 0;
}
