// Metric statistics over resampled units: the draws are those of the mean bootstrap, and F1, precision and
// MCC intervals equal numpy's / CPython's (scripts/reference/statistic_ref.py wrote the expected values).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { bootstrapCi, statisticCi, type RngName } from "../../src/stats/intervals.js";
import type { MetricRow } from "../../src/contract/task.js";
import { testData } from "../support/helpers.js";

const golden = JSON.parse(readFileSync(testData("golden/stats/statistics.json"), "utf8")) as {
  rows: MetricRow[];
  sparse: MetricRow[];
  cases: {
    statistic: string;
    rows?: string;
    rng: RngName;
    seed: number;
    resamples: number;
    level: number;
    point: number;
    lo: number;
    hi: number;
    undefined_resamples: number;
  }[];
};

const sum = (rows: readonly MetricRow[], k: string) => rows.reduce((t, r) => t + r.fields![k]!, 0);
const STATISTICS: Record<string, (rows: readonly MetricRow[]) => number | null> = {
  f1: (r) => {
    const d = 2 * sum(r, "tp") + sum(r, "fp") + sum(r, "fn");
    return d === 0 ? null : (2 * sum(r, "tp")) / d;
  },
  precision: (r) => {
    const d = sum(r, "tp") + sum(r, "fp");
    return d === 0 ? null : sum(r, "tp") / d;
  },
  mcc: (r) => {
    const [tp, fp, fn, tn] = ["tp", "fp", "fn", "tn"].map((k) => sum(r, k)) as [
      number,
      number,
      number,
      number,
    ];
    const d = Math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn));
    return d === 0 ? null : (tp * tn - fp * fn) / d;
  },
};

describe("statisticCi", () => {
  it.each(golden.cases.map((c) => [`${c.statistic}${c.rows ? ` (${c.rows})` : ""} ${c.rng}`, c] as const))(
    "%s equals the reference",
    (_name, c) => {
      const rows = c.rows === "sparse" ? golden.sparse : golden.rows;
      const r = statisticCi(rows, STATISTICS[c.statistic]!, c);
      expect(r.point).toBe(c.point);
      expect(r.lo).toBe(c.lo);
      expect(r.hi).toBe(c.hi);
      expect(r.undefined_resamples).toBe(c.undefined_resamples);
    },
  );

  it.each(["numpy", "python"] as RngName[])(
    "the mean as a statistic draws exactly as bootstrapCi (%s)",
    (rng) => {
      const o = { rng, seed: 3, resamples: 500, level: 0.9, fallback: false };
      const mean = (rows: readonly MetricRow[]) => rows.reduce((t, r) => t + r.value, 0) / rows.length;
      const a = statisticCi(golden.rows, mean, o);
      const b = bootstrapCi(golden.rows, o);
      expect([a.lo, a.hi]).toEqual([b.lo, b.hi]);
    },
  );
});
