// medbench report [SPEC...] -o F.html: one offline HTML page with every run's metrics and audit facts.
import { resolve } from "node:path";
import { parse } from "../args.js";
import { checkOutput, REPORT_OUTPUT } from "../output.js";
import { usageError, type Command } from "../command.js";
import { projectDir, specOrBuiltIn } from "../options.js";
import { specsToReport } from "../report-specs.js";

export const command: Command = {
  help: `usage: medbench report [SPEC...] -o report.html [--project DIR] [--registry FILE] [--json]

  Every run under results/ of the given specs (files, or names of built-in specs; default: every spec in
  specs/ and every built-in spec medbench.lock records a build of). Each run's cost is its tokens at the
  prices of the registry (and of the --registry FILE routes).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      output: { type: "string", short: "o" },
      project: { type: "string" },
      registry: { type: "string", multiple: true },
      json: { type: "boolean" },
    },
    "report",
  );
  if (!values.output) throw usageError(command, "report needs -o FILE.html");
  const root = projectDir(values.project);
  checkOutput(values.output, resolve(root, values.output), REPORT_OUTPUT, root);
  const { writeReport } = await import("../../report/report.js");
  const specs = positionals.length
    ? positionals.map((arg) => specOrBuiltIn(arg, "report", root))
    : specsToReport(root);
  const { commandRoutes } = await import("../../model/routes.js");
  const registries = (values.registry as string[] | undefined) ?? [];
  const known = commandRoutes(registries);
  const routes = { route: (name: string) => known.get(name), registries };
  const out = await writeReport({ specs, output: values.output, root, routes });
  if (values.json)
    process.stdout.write(
      JSON.stringify({
        report: out.file,
        runs: out.runs,
        tasks: out.tasks,
        broken: out.broken,
        modified: out.modified,
      }) + "\n",
    );
  else {
    process.stdout.write(`${out.file}: ${out.runs} runs of ${out.tasks} tasks\n`);
    for (const broken of out.broken)
      process.stderr.write(`warning: broken run, listed as such: ${broken}\n`);
    for (const modified of out.modified)
      process.stderr.write(`warning: run modified since build, listed apart and not ranked: ${modified}\n`);
  }
  return 0;
}
