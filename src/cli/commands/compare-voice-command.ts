// medbench compare-voice-command RUN_A RUN_B: paired comparison of two voice-command runs.
import { parse } from "../args.js";
import { usageError, type Command } from "../command.js";

export const command: Command = {
  synopsis: "compare-voice-command RUN_A RUN_B",
  summary: "paired comparison of two voice-command runs",
  help: `usage: medbench compare-voice-command RUN_A RUN_B [--json]

  RUN_A and RUN_B are result directories of full voice-command runs (metrics.json and items.jsonl).
  Prints A - B in percentage points per subset with a cluster bootstrap over group (2,000 resamples,
  Python random seed 0) and the exact McNemar p on items.`,
  run,
};

async function run(argv: string[]): Promise<number> {
  const { compareVoiceCommand } = await import("../compare.js");
  const { values, positionals } = parse(argv, { json: { type: "boolean" } });
  if (positionals.length !== 2)
    throw usageError(command, "compare-voice-command takes two result directories");
  const result = compareVoiceCommand(positionals[0]!, positionals[1]!);
  if (values.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return 0;
  }
  const lines = [
    `A ${result.a.dir}  (${result.a.model})`,
    `B ${result.b.dir}  (${result.b.model})`,
    `spec_hash ${result.spec_hash}`,
    "",
  ];
  lines.push(
    [
      "subset".padEnd(12),
      "A %".padStart(7),
      "B %".padStart(7),
      "A-B pp".padStart(8),
      "95% CI".padStart(17),
      "McNemar p".padStart(10),
      "b",
      "c",
    ].join("  "),
  );
  for (const r of result.rows) {
    lines.push(
      [
        r.subset.padEnd(12),
        (100 * r.a).toFixed(1).padStart(7),
        (100 * r.b).toFixed(1).padStart(7),
        r.diff_pp.toFixed(1).padStart(8),
        `${r.lo.toFixed(1)}–${r.hi.toFixed(1)}`.padStart(17),
        r.mcnemar_p.toPrecision(3).padStart(10),
        String(r.b_count),
        String(r.c_count),
      ].join("  "),
    );
  }
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}
