// The reference procedures of docs/reference/statistics.md: cluster bootstrap, numpy's linear percentile,
// Clopper-Pearson, exact McNemar. Sums run left to right: the order is part of the recipe.
import { NumpyGenerator } from "./pcg64.js";
import { PyRandom } from "./mt19937.js";

export type RngName = "numpy" | "python";

export interface Row {
  value: number;
  cluster?: string | number | null;
}

export interface Clusters {
  sums: Float64Array;
  counts: Float64Array;
  order: (string | number)[];
}

/** Clusters in order of first appearance (`members`: each one's row indices, in row order); without a
 *  cluster id every row is its own. */
export function clustersOf(
  rows: Row[],
  values: number[][] = [rows.map((row) => row.value)],
): { order: (string | number)[]; sums: Float64Array[]; counts: Float64Array; members: number[][] } {
  const index = new Map<string | number, number>();
  const order: (string | number)[] = [];
  const members: number[][] = [];
  rows.forEach((row, i) => {
    const id = row.cluster ?? `\u0000row${i}`;
    let cluster = index.get(id);
    if (cluster === undefined) {
      cluster = order.length;
      index.set(id, cluster);
      order.push(id);
      members.push([]);
    }
    members[cluster]!.push(i);
  });
  const sums = values.map((vs) =>
    Float64Array.from(members, (clusterRows) => seqSum(clusterRows.map((i) => vs[i]!))),
  );
  return { order, sums, counts: Float64Array.from(members, (clusterRows) => clusterRows.length), members };
}

export function seqSum(xs: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < xs.length; i++) total += xs[i]!;
  return total;
}

/** The draws of earlier calls by (rng, seed, resamples, G): a run's metrics resample the same clusters with
 *  the same seed, so they would draw the same indices again. Kept up to DRAWS_KEPT indices in all, in two
 *  bytes each below 65,536 clusters: held until the stage ends, they were most of a small run's last peak
 *  of memory (4.2 MB of a 2,070-item voice-command build's, in four bytes). */
const draws = new Map<string, Uint16Array | Int32Array>();
const DRAWS_KEPT = 8_000_000; // 16 MB in two bytes, 32 MB in four
let drawsHeld = 0;

/** Calls `each(idx)` once per resample with G cluster indices drawn with replacement (read-only). */
export function drawResamples(
  rng: RngName,
  seed: number,
  resamples: number,
  clusterCount: number,
  each: (idx: Int32Array) => void,
): void {
  const key = `${rng} ${seed} ${resamples} ${clusterCount}`;
  const idx = new Int32Array(clusterCount);
  const kept = draws.get(key);
  if (kept) {
    for (let resample = 0; resample < resamples; resample++) {
      idx.set(kept.subarray(resample * clusterCount, (resample + 1) * clusterCount));
      each(idx);
    }
    return;
  }
  const keep = resamples * clusterCount <= DRAWS_KEPT;
  const size = resamples * clusterCount;
  const all = !keep ? null : clusterCount <= 65_536 ? new Uint16Array(size) : new Int32Array(size);
  const numpy = rng === "numpy" ? new NumpyGenerator(seed) : null;
  const python = numpy ? null : new PyRandom(seed);
  for (let resample = 0; resample < resamples; resample++) {
    if (numpy) numpy.integers(0, clusterCount, clusterCount, idx);
    else python!.choicesIndex(clusterCount, clusterCount, idx);
    all?.set(idx, resample * clusterCount);
    each(idx);
  }
  if (!all) return;
  // The oldest go first when the new ones would hold more than DRAWS_KEPT.
  for (const [oldestKey, held] of draws) {
    if (drawsHeld + all.length <= DRAWS_KEPT) break;
    draws.delete(oldestKey);
    drawsHeld -= held.length;
  }
  draws.set(key, all);
  drawsHeld += all.length;
}

/** The bytes the kept draws hold (tests/stats/draws.test.ts). */
export const keptDrawBytes = (): number =>
  [...draws.values()].reduce((total, kept) => total + kept.byteLength, 0);

/** Lets the kept draws go (a bootstrap stage, once done: up to 32 MB that nothing after it reads). */
export function forgetDraws(): void {
  draws.clear();
  drawsHeld = 0;
}

/** np.percentile(x, q) with method="linear", to the bit. Sorts a copy. */
export function percentile(values: ArrayLike<number>, percent: number): number {
  const x = Float64Array.from(values).sort();
  const position = (x.length - 1) * (percent / 100);
  const lowerIndex = Math.floor(position);
  const fraction = position - lowerIndex;
  if (lowerIndex >= x.length - 1) return x[x.length - 1]!;
  const lower = x[lowerIndex]!,
    upper = x[lowerIndex + 1]!;
  const gap = upper - lower;
  return fraction >= 0.5 ? upper - gap * (1 - fraction) : lower + gap * fraction;
}

// Loaded on first use: only Clopper-Pearson intervals need it. The package's ~410 modules as one file
// (scripts/bundle-vendor.mjs, dist/vendor/): 22 ms and 6 MB to load where the modules took 97 ms and
// 15 MB. A literal require: the file stays in the stage keys.
type BetaQuantile = typeof import("@stdlib/stats-base-dists-beta-quantile");
let betaQuantileFn: BetaQuantile | undefined;
/** The beta quantile, loaded (a bootstrap stage loads it ahead: src/load/ahead.ts). */
export const loadBetaQuantile = (): BetaQuantile =>
  (betaQuantileFn ??= require("../../vendor/beta-quantile.cjs") as BetaQuantile);
const betaQuantile = (probability: number, alpha: number, beta: number): number =>
  loadBetaQuantile()(probability, alpha, beta);

export function clopperPearson(successes: number, trials: number, level: number): [number, number] {
  const alpha = 1 - level;
  const lo = successes === 0 ? 0 : betaQuantile(alpha / 2, successes, trials - successes + 1);
  const hi = successes === trials ? 1 : betaQuantile(1 - alpha / 2, successes + 1, trials - successes);
  return [lo, hi];
}

export interface CiOptions {
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
  fallback?: boolean;
}

export interface CiResult {
  n: number;
  clusters: number;
  point: number;
  lo: number;
  hi: number;
  method: "bootstrap" | "clopper-pearson";
  rng: RngName;
  seed: number;
  resamples: number;
  level: number;
}

export function bootstrapCi(rows: Row[], options: CiOptions): CiResult {
  const plan = bootstrapCiPlan(rows, options);
  runPlans([plan], options);
  return plan.done();
}

/** One interval's share of a pass over the resamples: the clusters it draws from (0: it draws nothing), what
 *  it does with each resample's drawn indices (a view, valid only during the call) and its result after. */
export interface ResamplePlan<T> {
  g: number;
  each(idx: Int32Array): void;
  done(): T;
}

/**
 * Runs intervals that draw with the same generator, seed and number of resamples, drawing once per number of
 * clusters: the draws depend on nothing else, so each plan sees exactly the draws it would see alone, in the
 * same order. A run's many metrics over the same units used to draw them again each once they no longer
 * fitted the kept draws (DRAWS_KEPT), which doubled the bootstrap's time per item past about 4,000 units.
 * Draws that do not fit are made once, a chunk of resamples at a time, and every plan takes the
 * whole chunk before the next plan does (one metric's rows stay in the CPU's caches; taking turns per
 * resample made it several times slower).
 */
export function runPlans(
  plans: Pick<ResamplePlan<unknown>, "g" | "each">[],
  options: Pick<CiOptions, "rng" | "seed" | "resamples">,
): void {
  const byClusters = new Map<number, Pick<ResamplePlan<unknown>, "each">[]>();
  for (const plan of plans) {
    if (plan.g === 0) continue;
    const same = byClusters.get(plan.g);
    if (same) same.push(plan);
    else byClusters.set(plan.g, [plan]);
  }
  for (const [clusterCount, same] of byClusters) {
    if (options.resamples * clusterCount <= DRAWS_KEPT) {
      // drawn by the first plan and kept: the others are served from them
      for (const plan of same)
        drawResamples(options.rng, options.seed, options.resamples, clusterCount, plan.each);
      continue;
    }
    const per = Math.max(1, Math.floor(CHUNK / clusterCount));
    const chunk = new Int32Array(per * clusterCount);
    let filled = 0;
    const flush = () => {
      for (const plan of same)
        for (let resample = 0; resample < filled; resample++)
          plan.each(chunk.subarray(resample * clusterCount, (resample + 1) * clusterCount));
      filled = 0;
    };
    drawResamples(options.rng, options.seed, options.resamples, clusterCount, (idx) => {
      chunk.set(idx, filled * clusterCount);
      if (++filled === per) flush();
    });
    flush();
  }
}
/** Indices per chunk of draws shared by plans whose draws are not kept (4 MB). */
const CHUNK = 1_000_000;

/** bootstrapCi as a plan (runPlans draws for it). */
export function bootstrapCiPlan(rows: Row[], options: CiOptions): ResamplePlan<CiResult> {
  if (rows.length === 0) throw new Error("no rows to estimate an interval from");
  const values = rows.map((row) => row.value);
  const { order, sums, counts } = clustersOf(rows);
  const clusterSums = sums[0]!;
  const clusterCount = order.length;
  const point = seqSum(values) / values.length;
  const boot = new Float64Array(options.resamples);
  let filled = 0;
  const each = (idx: Int32Array) => {
    let num = 0,
      den = 0;
    for (let i = 0; i < clusterCount; i++) num += clusterSums[idx[i]!]!;
    for (let i = 0; i < clusterCount; i++) den += counts[idx[i]!]!;
    boot[filled++] = num / den;
  };
  const done = (): CiResult => {
    let lo = percentile(boot, (100 * (1 - options.level)) / 2);
    let hi = percentile(boot, (100 * (1 + options.level)) / 2);
    let method: CiResult["method"] = "bootstrap";
    if ((options.fallback ?? true) && (point === 0 || point === 1 || lo === hi)) {
      method = "clopper-pearson";
      [lo, hi] = clopperPearson(Math.floor(point * clusterCount + 0.5), clusterCount, options.level);
    }
    return {
      n: rows.length,
      clusters: clusterCount,
      point,
      lo,
      hi,
      method,
      rng: options.rng,
      seed: options.seed,
      resamples: options.resamples,
      level: options.level,
    };
  };
  return { g: clusterCount, each, done };
}

export interface PairedResult {
  n: number;
  clusters: number;
  diff_pp: number;
  lo: number;
  hi: number;
  mcnemar_p: number;
  b: number;
  c: number;
  rng: RngName;
  seed: number;
  resamples: number;
  level: number;
}

/** A - B in percentage points on the same items, a cluster bootstrap of the difference, exact McNemar. */
export function pairedComparison(
  rowsA: { id: string; value: number; cluster?: string | number | null }[],
  rowsB: { id: string; value: number }[],
  options: CiOptions,
): PairedResult {
  const byId = new Map(rowsB.map((row) => [row.id, row.value]));
  const idsA = new Set(rowsA.map((row) => row.id));
  if (
    idsA.size !== rowsA.length ||
    byId.size !== rowsB.length ||
    idsA.size !== byId.size ||
    rowsA.some((row) => !byId.has(row.id))
  ) {
    throw new Error("the two result sets do not hold the same items");
  }
  const va = rowsA.map((row) => row.value);
  const vb = rowsA.map((row) => byId.get(row.id)!);
  const { order, sums, counts } = clustersOf(rowsA, [va, vb]);
  const sa = sums[0]!,
    sb = sums[1]!;
  const clusterCount = order.length;
  const rowCount = rowsA.length;
  const diff = 100 * (seqSum(va) / rowCount - seqSum(vb) / rowCount);
  const boot = new Float64Array(options.resamples);
  let resample = 0;
  drawResamples(options.rng, options.seed, options.resamples, clusterCount, (idx) => {
    let count = 0,
      sumA = 0,
      sumB = 0;
    for (let i = 0; i < clusterCount; i++) count += counts[idx[i]!]!;
    for (let i = 0; i < clusterCount; i++) sumA += sa[idx[i]!]!;
    for (let i = 0; i < clusterCount; i++) sumB += sb[idx[i]!]!;
    boot[resample++] = 100 * (sumA / count - sumB / count);
  });
  let bCount = 0,
    cCount = 0;
  for (let i = 0; i < rowCount; i++) {
    if (va[i] === 1 && vb[i] === 0) bCount++;
    else if (va[i] === 0 && vb[i] === 1) cCount++;
  }
  return {
    n: rowCount,
    clusters: clusterCount,
    diff_pp: diff,
    lo: percentile(boot, (100 * (1 - options.level)) / 2),
    hi: percentile(boot, (100 * (1 + options.level)) / 2),
    mcnemar_p: mcnemarExact(bCount, cCount),
    b: bCount,
    c: cCount,
    rng: options.rng,
    seed: options.seed,
    resamples: options.resamples,
    level: options.level,
  };
}

/** Exact McNemar over the discordant pairs (`onlyA`: items right in A alone, the formula's b; `onlyB`: its
 *  c): min(1, 2 * sum_{i<=min(b,c)} C(b+c, i) / 2^(b+c)), with integer arithmetic. */
export function mcnemarExact(onlyA: number, onlyB: number): number {
  const discordant = onlyA + onlyB;
  if (discordant === 0) return 1;
  let term = 1n;
  let tail = 0n;
  for (let i = 0; i <= Math.min(onlyA, onlyB); i++) {
    if (i > 0) term = (term * BigInt(discordant - i + 1)) / BigInt(i);
    tail += term;
  }
  const num = 2n * tail;
  const den = 1n << BigInt(discordant);
  if (num >= den) return 1;
  return ratio(num, den);
}

/** num / den (den a power of two) rounded well enough for 1e-15 relative. */
function ratio(num: bigint, den: bigint): number {
  const bits = num.toString(2).length;
  const shift = Math.max(0, bits - 64);
  const denBits = den.toString(2).length - 1;
  return Number(num >> BigInt(shift)) * 2 ** (shift - denBits);
}

export interface StatisticCiResult {
  n: number;
  clusters: number;
  point: number | null;
  lo: number | null;
  hi: number | null;
  method: "bootstrap" | "none";
  /**
   * Resamples where the statistic is undefined (e.g. F1 with no positives drawn);
   * left out of the percentiles.
   */
  undefined_resamples: number;
  rng: RngName;
  seed: number;
  resamples: number;
  level: number;
}

/** A percentile bootstrap of any statistic of the rows: whole clusters drawn exactly as `bootstrapCi` draws
 *  them (same generator, same cluster order), the statistic computed on the drawn clusters' rows. */
export function statisticCi<R extends Row>(
  rows: R[],
  statistic: (rows: readonly R[]) => number | null,
  options: CiOptions,
): StatisticCiResult {
  const plan = statisticCiPlan(rows, statistic, options);
  runPlans([plan], options);
  return plan.done();
}

/** statisticCi as a plan (runPlans draws for it; nothing to draw when there is no point estimate). */
export function statisticCiPlan<R extends Row>(
  rows: R[],
  statistic: (rows: readonly R[]) => number | null,
  options: CiOptions,
): ResamplePlan<StatisticCiResult> {
  const { members } = clustersOf(rows, []);
  const clusterCount = members.length;
  // The rows laid out cluster by cluster in one array, cluster c at [start[c], start[c + 1]) in their own
  // order: a draw reads two offsets and a run of that array, not a small array of its own somewhere in the
  // heap (at tens of thousands of clusters, those reads missed the CPU's caches on every draw).
  const start = new Int32Array(clusterCount + 1);
  members.forEach((clusterRows, cluster) => (start[cluster + 1] = start[cluster]! + clusterRows.length));
  const byCluster = members.flatMap((clusterRows) => clusterRows.map((i) => rows[i]!));
  const point = rows.length ? statistic(rows) : null;
  const boot: number[] = [];
  let undef = 0;
  const each = (idx: Int32Array) => {
    const drawn: R[] = [];
    for (let i = 0; i < clusterCount; i++) {
      const cluster = idx[i]!;
      for (let member = start[cluster]!; member < start[cluster + 1]!; member++)
        drawn.push(byCluster[member]!);
    }
    const value = statistic(drawn);
    if (value === null || Number.isNaN(value)) undef++;
    else boot.push(value);
  };
  const done = (): StatisticCiResult => {
    const ok = boot.length > 0;
    return {
      n: rows.length,
      clusters: clusterCount,
      point,
      lo: ok ? percentile(boot, (100 * (1 - options.level)) / 2) : null,
      hi: ok ? percentile(boot, (100 * (1 + options.level)) / 2) : null,
      method: ok ? "bootstrap" : "none",
      undefined_resamples: undef,
      rng: options.rng,
      seed: options.seed,
      resamples: options.resamples,
      level: options.level,
    };
  };
  return { g: clusterCount > 0 && point !== null ? clusterCount : 0, each, done };
}
