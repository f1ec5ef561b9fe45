// medbench stats ci|paired: the interval procedures on JSONL files.
import type { RngName } from "../../stats/intervals.js";
import { floatOption, intOption, parse } from "../args.js";
import { UsageError } from "../../errors.js";
import { usageError, type Command } from "../command.js";

export const command: Command = {
  help: `usage:
  medbench stats ci --input F.jsonl --value KEY [--cluster KEY] [--resamples 1000] [--seed 0] \\
    [--rng numpy|python] [--level 0.95] [--json]
  medbench stats paired --a A.jsonl --b B.jsonl --value KEY --id KEY [--cluster KEY] [--resamples 2000] \\
    [--seed 0] [--rng python|numpy] [--level 0.95] [--json]

  Both print one JSON object on stdout (--json is accepted and changes nothing).`,
  run,
};

const COMMON = {
  value: { type: "string" },
  cluster: { type: "string" },
  resamples: { type: "string" },
  seed: { type: "string" },
  rng: { type: "string" },
  level: { type: "string" },
  json: { type: "boolean" }, // the output is one JSON object either way
} as const;

/** Each subcommand's own flags: `stats ci --a` is refused, not ignored. */
const OPTIONS = {
  ci: { input: { type: "string" }, ...COMMON },
  paired: { a: { type: "string" }, b: { type: "string" }, id: { type: "string" }, ...COMMON },
} as const;

async function run(argv: string[]): Promise<number> {
  const { statsCi, statsPaired } = await import("../stats.js");
  const { MAX_RESAMPLES } = await import("../../stats/limits.js");
  const [sub, ...rest] = argv;
  if (sub !== "ci" && sub !== "paired") throw usageError(command, "stats takes ci or paired");
  const { values, positionals } = parse(rest, OPTIONS[sub] as typeof OPTIONS.paired, `stats ${sub}`);
  if (positionals.length) throw usageError(command, `unexpected argument ${positionals[0]}`);
  const need = (option: string) => {
    const value = values[option as keyof typeof values];
    if (typeof value !== "string") throw usageError(command, `stats ${sub} needs --${option}`);
    return value;
  };
  const rng = (values.rng ?? (sub === "paired" ? "python" : "numpy")) as RngName;
  if (rng !== "numpy" && rng !== "python")
    throw new UsageError(`--rng is numpy or python, not ${JSON.stringify(rng)}`);
  const level = floatOption(values.level, "level", 0.95);
  if (!(level > 0 && level < 1)) throw new UsageError("--level is between 0 and 1, e.g. 0.95");
  const args = {
    resamples: intOption(values.resamples, "resamples", sub === "paired" ? 2000 : 1000),
    seed: intOption(values.seed, "seed", 0),
    rng,
    level,
    value: need("value"),
    cluster: values.cluster,
  };
  if (args.resamples < 1 || args.resamples > MAX_RESAMPLES)
    throw new UsageError(
      `--resamples ${args.resamples}: give 1 to ${MAX_RESAMPLES.toLocaleString("en")} ` +
        "(the documented maximum, docs/statistics.md)",
    );
  if (args.seed < 0 || !Number.isSafeInteger(args.seed))
    throw new UsageError("--seed must be a whole number from 0 to 2^53 - 1");
  const out =
    sub === "ci"
      ? statsCi(need("input"), args)
      : statsPaired({ a: need("a"), b: need("b"), id: need("id") }, args);
  process.stdout.write(JSON.stringify(out) + "\n");
  return 0;
}
