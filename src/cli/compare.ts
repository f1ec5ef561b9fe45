// Paired comparison of two full runs of one task: item by item as the task declares (`compare`: verdicts,
// rows by a meta field, clusters), or else the primary metric unit by unit (units.jsonl, what the
// bootstrap resampled). The voice-command document's compare.py is the first kind.
import { existsSync } from "../util/builtins.js";
import { join } from "node:path";
import { pairedComparison, type RngName } from "../stats/intervals.js";
import { metricsProblem, readResultJson, readResultLines } from "../check/result-files.js";
import type { CompareDecl } from "../contract/task.js";
import { pairVerdicts, type ComparedItem } from "../contract/compare.js";
import type { UnitRecord } from "../contract/records.js";
import { UsageError } from "../errors.js";
import type { Json } from "../util/json.js";
import { modifiedMessage, modifiedSinceBuild } from "../runner/results/results-check.js";

interface RunMetrics {
  slug: string;
  spec_hash: string;
  partial: boolean;
  incomplete?: boolean;
  model: string | null;
  primary?: string | null;
}

export interface PairedOptions {
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
}

/** What a task that declares no `compare` gets: the check's paired bootstrap (numpy default_rng(0)). */
export const UNITS_PAIRED: PairedOptions = { resamples: 2000, seed: 0, rng: "numpy", level: 0.95 };

/** Refuses a results file that is not what its build wrote (src/runner/results/results-check.ts), naming
 * it. */
function checkUnmodified(dir: string, file: string, cacheDir: string | null): void {
  const problems = modifiedSinceBuild(dir, cacheDir, [file]);
  if (problems.length)
    throw new UsageError(
      `${modifiedMessage(dir, problems)}: a modified run is never compared; ` +
        `rebuild it (medbench build SPEC writes the folder whole) or pick another run`,
    );
}

function readMetrics(dir: string, cacheDir: string | null): RunMetrics {
  const mf = join(dir, "metrics.json");
  if (!existsSync(mf)) throw new UsageError(`${dir} is not a result directory (it has no metrics.json)`);
  const metrics = readResultJson(mf);
  const problem = metricsProblem(metrics);
  if (problem)
    throw new UsageError(`${mf} is not a run's result (${problem}): rebuild it or pick another run`);
  checkUnmodified(dir, "metrics.json", cacheDir);
  return metrics as RunMetrics;
}

function readLines<T>(dir: string, file: string, why: string, cacheDir: string | null): T[] {
  const path = join(dir, file);
  if (!existsSync(path)) throw new UsageError(`${dir} is not a result directory (it needs ${file}${why})`);
  const lines = readResultLines<T>(path);
  checkUnmodified(dir, file, cacheDir);
  return lines;
}

/** The slug both runs are of, after checking they can be compared at all. `cacheDir`: the project's cache,
 *  whose stage records the results folders' build.json must agree with. */
export function comparable(
  dirA: string,
  dirB: string,
  cacheDir: string | null,
  slug?: string,
): { a: RunMetrics; b: RunMetrics; cacheDir: string | null } {
  const metricsA = readMetrics(dirA, cacheDir),
    metricsB = readMetrics(dirB, cacheDir);
  for (const [dir, metrics] of [
    [dirA, metricsA],
    [dirB, metricsB],
  ] as const) {
    if (slug && metrics.slug !== slug)
      throw new UsageError(`${dir} is a run of ${metrics.slug}, not of ${slug}`);
    if (metrics.partial)
      throw new UsageError(`${dir} is a partial run (--subset or --limit); partial runs are never compared`);
  }
  if (metricsA.slug !== metricsB.slug)
    throw new UsageError(`${dirA} is a run of ${metricsA.slug}, ${dirB} of ${metricsB.slug}`);
  if (metricsA.spec_hash !== metricsB.spec_hash)
    throw new UsageError(
      `the runs are of different specs ` +
        `(spec_hash ${metricsA.spec_hash.slice(0, 12)}… and ${metricsB.spec_hash.slice(0, 12)}…)`,
    );
  return { a: metricsA, b: metricsB, cacheDir };
}

const sameIds = (left: { id: string }[], right: { id: string }[]) =>
  left
    .map((i) => i.id)
    .sort()
    .join("\n") ===
  right
    .map((i) => i.id)
    .sort()
    .join("\n");

const meanOf = (xs: { value: number }[]) => xs.reduce((sum, x) => sum + x.value, 0) / xs.length;

function row(
  unitsA: { id: string; value: number; cluster: string }[],
  unitsB: typeof unitsA,
  options: PairedOptions,
) {
  const comparison = pairedComparison(unitsA, unitsB, options);
  return {
    n: comparison.n,
    a: meanOf(unitsA),
    b: meanOf(unitsB),
    diff_pp: comparison.diff_pp,
    lo: comparison.lo,
    hi: comparison.hi,
    mcnemar_p: comparison.mcnemar_p,
    b_count: comparison.b,
    c_count: comparison.c,
  };
}

/** The items (or units) whose value differs between the runs on one verdict, and how many went each way
 *  (`"true → false"`: true in A, false in B). */
export interface Flips {
  verdict: string;
  directions: Record<string, number>;
  items: { id: string; a: Json | undefined; b: Json | undefined }[];
}

const said = (value: Json | undefined) => (value === undefined ? "absent" : JSON.stringify(value));

export function flipsOf(
  verdict: string,
  pairs: { id: string; a: Json | undefined; b: Json | undefined }[],
): Flips {
  const items = pairs.filter((pair) => said(pair.a) !== said(pair.b));
  const directions: Record<string, number> = {};
  for (const pair of items) {
    const direction = `${said(pair.a)} → ${said(pair.b)}`;
    directions[direction] = (directions[direction] ?? 0) + 1;
  }
  return { verdict, directions, items: items.map((pair) => ({ id: pair.id, a: pair.a, b: pair.b })) };
}

/** The two runs' metrics, once checked comparable (comparable()). */
type Runs = ReturnType<typeof comparable>;

/** Item by item, as the task declares: one row per verdict and value of `by`. */
export function compareItems(
  dirA: string,
  dirB: string,
  decl: CompareDecl,
  options: PairedOptions,
  runs: Runs,
) {
  const { a: runA, b: runB } = runs;
  const itemsA = readLines<ComparedItem>(dirA, "items.jsonl", "", runs.cacheDir),
    itemsB = readLines<ComparedItem>(dirB, "items.jsonl", "", runs.cacheDir);
  if (!sameIds(itemsA, itemsB)) throw new UsageError("the runs do not hold the same items");
  // Items without a verdict on either side (e.g. an API error) are left out of both.
  const { left, rows: pairs } = pairVerdicts(itemsA, itemsB, decl);
  const rows = pairs.map(({ verdict, group, pairs }) => {
    const side = (which: "a" | "b") =>
      pairs.map((pair) => ({ id: pair.id, value: pair[which] ? 1 : 0, cluster: pair.cluster }));
    return {
      ...(decl.verdicts.length > 1 ? { verdict } : {}),
      [decl.by ?? "group"]: group,
      ...row(side("a"), side("b"), options),
    };
  });
  return {
    spec_hash: runA.spec_hash,
    a: { dir: dirA, model: runA.model },
    b: { dir: dirB, model: runB.model },
    verdict: decl.verdicts[0]!.name,
    resamples: options.resamples,
    seed: options.seed,
    rng: options.rng,
    left_out_api_errors: left.size,
    rows,
    flips: decl.verdicts.map((verdict) =>
      flipsOf(
        verdict.name,
        pairs.filter((row) => row.verdict === verdict.name).flatMap((row) => row.pairs),
      ),
    ),
  };
}

/** Units of A with their value in B (by id). */
function unitPairs(unitsA: UnitRecord[], unitsB: UnitRecord[]) {
  const inB = new Map(unitsB.map((unit) => [unit.id, unit.value]));
  return unitsA.map((unit) => ({ id: unit.id, a: unit.value, b: inB.get(unit.id) }));
}

/** Unit by unit on the primary metric (units.jsonl): for a task that declares no item comparison. */
export function compareUnits(dirA: string, dirB: string, options: PairedOptions, runs: Runs) {
  const { a: runA, b: runB } = runs;
  const why =
    ": rebuild the run (the bootstrap stage writes it; add `units.jsonl: bootstrap/units` to results.files)";
  const ua = readLines<UnitRecord>(dirA, "units.jsonl", why, runs.cacheDir),
    ub = readLines<UnitRecord>(dirB, "units.jsonl", why, runs.cacheDir);
  if (!sameIds(ua, ub)) throw new UsageError("the runs do not hold the same units");
  return {
    spec_hash: runA.spec_hash,
    a: { dir: dirA, model: runA.model },
    b: { dir: dirB, model: runB.model },
    verdict: runA.primary ?? "primary",
    resamples: options.resamples,
    seed: options.seed,
    rng: options.rng,
    left_out_api_errors: 0,
    rows: [{ group: "all", ...row(ua, ub, options) }],
    flips: [flipsOf(runA.primary ?? "primary", unitPairs(ua, ub))],
  };
}

export type Comparison = ReturnType<typeof compareItems>;
