// medbench diff A B: two versions of a spec, their hashes, changed fields and invalidated stages.
import { paint, useColour } from "../../log/loggers.js";
import { parse } from "../args.js";
import { usageError, type Command } from "../command.js";
import { projectDir, specOrBuiltIn } from "../options.js";

export const command: Command = {
  help: `usage: medbench diff A B [--project DIR] [--json]

  A and B are spec files or git revisions as REV:path (e.g. v1:specs/voice-command.yaml).`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: "boolean" }, project: { type: "string" } },
    "diff",
  );
  if (positionals.length !== 2) throw usageError(command, "diff takes two specs");
  const { diffSpecs } = await import("../diff.js");
  const root = projectDir(values.project);
  const d = await diffSpecs({
    a: specOrBuiltIn(positionals[0]!, "diff", root),
    b: specOrBuiltIn(positionals[1]!, "diff", root),
    root,
  });
  if (values.json) {
    process.stdout.write(JSON.stringify(d) + "\n");
    return 0;
  }
  const c = paint(useColour(process.stdout));
  const out: string[] = [
    `A ${d.a.label}  spec_hash ${d.a.spec_hash}`,
    `B ${d.b.label}  spec_hash ${d.b.spec_hash}${d.a.spec_hash === d.b.spec_hash ? c.dim("  (same)") : ""}`,
  ];
  out.push("", d.fields.length ? "changed fields:" : "no field changed");
  for (const f of d.fields) {
    const from = c.red(JSON.stringify(f.from) ?? "(none)");
    out.push(`  ${f.path}: ${from} -> ${c.green(JSON.stringify(f.to) ?? "(none)")}`);
  }
  out.push("", d.stages.length ? "stages invalidated:" : "no stage invalidated");
  for (const s of d.stages) out.push(`  ${s.name}: ${s.reasons.join("; ")}`);
  process.stdout.write(out.join("\n") + "\n");
  return 0;
}
