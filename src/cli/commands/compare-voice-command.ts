// medbench compare-voice-command RUN_A RUN_B: `medbench compare` for the voice-command task, under the name
// its published document uses (its compare.py).
import type { Command } from "../command.js";
import { runCompare } from "./compare.js";

export const command: Command = {
  help: `usage: medbench compare-voice-command RUN_A RUN_B [--project DIR] [--json]

  RUN_A and RUN_B are result directories of full voice-command runs (metrics.json and items.jsonl).
  Prints A - B in percentage points per subset with a cluster bootstrap over group (2,000 resamples,
  Python random seed 0) and the exact McNemar p on items. The same as \`medbench compare\`.`,
  run: (argv) => runCompare(argv, command, "compare-voice-command", "kor-surgical-robot-voice-command"),
};
