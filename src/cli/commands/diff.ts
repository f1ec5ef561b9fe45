// medbench diff A B: two versions of a spec, their hashes, changed fields and invalidated stages.
import { paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import { usageError, type Command } from "../command.js";
import { optionsOf, projectDir, specOrBuiltIn } from "../options.js";

export const command: Command = {
  help: `usage: medbench diff A B [--project DIR] [--json]

  A and B are spec files or git revisions as REV:path (e.g. v1:specs/voice-command.yaml).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, optionsOf("json", "project"), "diff");
  if (positionals.length !== 2) throw usageError(command, "diff takes two specs");
  const { diffSpecs } = await import("../diff.js");
  const root = projectDir(values.project);
  const diff = await diffSpecs({
    a: specOrBuiltIn(positionals[0]!, "diff", root),
    b: specOrBuiltIn(positionals[1]!, "diff", root),
    root,
  });
  if (values.json) {
    process.stdout.write(JSON.stringify(diff) + "\n");
    return 0;
  }
  const colour = paint(useColour(process.stdout));
  const out: string[] = [
    `A ${diff.a.label}  spec_hash ${diff.a.spec_hash}`,
    `B ${diff.b.label}  spec_hash ${diff.b.spec_hash}` +
      (diff.a.spec_hash === diff.b.spec_hash ? colour.dim("  (same)") : ""),
  ];
  out.push("", diff.fields.length ? "changed fields:" : "no field changed");
  for (const field of diff.fields) {
    const from = colour.red(JSON.stringify(field.from) ?? "(none)");
    out.push(`  ${field.path}: ${from} -> ${colour.green(JSON.stringify(field.to) ?? "(none)")}`);
  }
  out.push("", diff.stages.length ? "stages invalidated:" : "no stage invalidated");
  for (const stage of diff.stages) out.push(`  ${stage.name}: ${stage.reasons.join("; ")}`);
  process.stdout.write(out.join("\n") + "\n");
  return 0;
}
