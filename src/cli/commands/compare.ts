// medbench compare RUN_A RUN_B: paired comparison of two full runs of one task, as its task declares.
import { readFileSync } from "../../util/builtins.js";
import { join, resolve } from "node:path";
import { parse } from "../args.js";
import { UsageError } from "../../errors.js";
import { usageError, type Command } from "../command.js";
import type { CompareDecl } from "../../contract/task.js";
import type { Comparison, Flips } from "../compare.js";
import { projectDir } from "../options.js";
import type { Json } from "../../util/json.js";

export const command: Command = {
  help:
    `usage: medbench compare RUN_A RUN_B [--flips] [--project DIR] [--registry FILE] [--json]

  RUN_A and RUN_B are results folders of full runs of one spec (same spec_hash). The task's \`compare\`
  says what is paired (item verdicts, rows by a field, clusters, the bootstrap's generator); a task that
  declares none is compared on its primary metric unit by unit (units.jsonl; 2,000 resamples, numpy
  default_rng(0)). Prints A - B in percentage points with its interval and the exact McNemar p, and each
  run's cost: its token totals at the prices of the registry (and --registry FILE routes). Then the flips:
  how many items (units, for a comparison by units) changed value on each compared verdict, per direction
  ("true → false": true in A, false in B); --flips lists each of them by id ` +
    "(with --json: `flips[].items`).",
  run: (argv) => runCompare(argv, command, "compare"),
};

/** The spec of the project whose slug this is, and its task's comparison (null: none declared). */
async function declOf(root: string, slug: string): Promise<CompareDecl | null> {
  const { parseSourceDoc } = await import("../../specfile/document.js");
  const { projectSpecs } = await import("../../specfile/project-specs.js");
  const spec = projectSpecs(root).find((file) => {
    try {
      return (parseSourceDoc(readFileSync(join(root, file)), file).value as { slug?: string }).slug === slug;
    } catch {
      return false;
    }
  });
  if (!spec)
    throw new UsageError(
      `no spec of ${slug} in ${join(root, "specs")}: ` +
        "run compare in the project whose specs/ holds the task's spec",
    );
  const { loadRuntime } = await import("../../load/runtime.js");
  return (await loadRuntime(resolve(root, spec), {})).task.module.compare ?? null;
}

/** compare, and compare-voice-command (the same for one task, named as its document names it). */
export async function runCompare(
  argv: string[],
  cmd: Command,
  name: string,
  slug?: string,
): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      json: { type: "boolean" },
      flips: { type: "boolean" },
      project: { type: "string" },
      registry: { type: "string", multiple: true },
    },
    name,
  );
  if (positionals.length !== 2) throw usageError(cmd, `${name} takes two result directories`);
  const [dirA, dirB] = positionals as [string, string];
  const { comparable, compareItems, compareUnits, UNITS_PAIRED } = await import("../compare.js");
  const root = projectDir(values.project);
  const runs = comparable(dirA, dirB, join(root, "cache"), slug);
  const decl = await declOf(root, runs.a.slug);
  const compared: Comparison = decl
    ? compareItems(dirA, dirB, decl, { ...UNITS_PAIRED, ...decl.paired }, runs)
    : compareUnits(dirA, dirB, UNITS_PAIRED, runs);
  const { costs, words } = await runCosts(runs, (values.registry as string[] | undefined) ?? []);
  const listed = Boolean(values.flips);
  const result = {
    ...compared,
    flips: compared.flips.map((flips) => (listed ? flips : { ...flips, items: undefined })),
    a: { ...compared.a, cost_usd: costs[0] },
    b: { ...compared.b, cost_usd: costs[1] },
  };
  if (values.json) process.stdout.write(JSON.stringify(result) + "\n");
  else process.stdout.write(render(result, decl?.by ?? "group", words) + flipLines(compared.flips, listed));
  return 0;
}

/** Each run's cost at the registry's prices (its tokens × its routes' price), and in words. */
async function runCosts(
  runs: { a: object; b: object },
  registry: string[],
): Promise<{ costs: (number | null)[]; words: string[] }> {
  const { runCost, costWords } = await import("../../model/price.js");
  const { commandRoutes } = await import("../../model/routes.js");
  const routes = commandRoutes(registry);
  const both = [runs.a, runs.b].map((metrics) =>
    runCost(metrics as Record<string, Json>, (name) => routes.get(name)),
  );
  return { costs: both.map((cost) => cost.usd), words: both.map(costWords) };
}

function render(result: Omit<Comparison, "flips">, by: string, costs: string[]): string {
  const lines = [
    `A ${result.a.dir}  (${result.a.model})  cost ${costs[0]}`,
    `B ${result.b.dir}  (${result.b.model})  cost ${costs[1]}`,
    `spec_hash ${result.spec_hash}`,
    "",
    [
      by.padEnd(12),
      "A %".padStart(7),
      "B %".padStart(7),
      "A-B pp".padStart(8),
      "95% CI".padStart(17),
      "McNemar p".padStart(10),
      "b",
      "c",
    ].join("  "),
  ];
  for (const row of result.rows as (Record<string, unknown> & Comparison["rows"][number])[]) {
    const label = [row.verdict, row[by]].filter((x) => x !== undefined).join(" ");
    lines.push(
      [
        String(label).padEnd(12),
        (100 * row.a).toFixed(1).padStart(7),
        (100 * row.b).toFixed(1).padStart(7),
        row.diff_pp.toFixed(1).padStart(8),
        `${row.lo.toFixed(1)}–${row.hi.toFixed(1)}`.padStart(17),
        row.mcnemar_p.toPrecision(3).padStart(10),
        String(row.b_count),
        String(row.c_count),
      ].join("  "),
    );
  }
  return lines.join("\n") + "\n";
}

/** Each verdict's flips per direction, and with `listed` every flipped item by id. */
function flipLines(all: Flips[], listed: boolean): string {
  const lines = [""];
  for (const flips of all) {
    const counts = Object.entries(flips.directions).map(([direction, count]) => `${count} ${direction}`);
    lines.push(
      `flips on ${flips.verdict}: ${flips.items.length}` + (counts.length ? ` (${counts.join(", ")})` : ""),
    );
    if (listed)
      for (const item of flips.items)
        lines.push(
          `  ${item.id}  ${JSON.stringify(item.a) ?? "absent"} → ${JSON.stringify(item.b) ?? "absent"}`,
        );
  }
  if (!listed && all.some((flips) => flips.items.length)) lines.push("(--flips lists them by id)");
  return lines.join("\n") + "\n";
}
