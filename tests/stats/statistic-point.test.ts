// A task's statistic whose point is not a finite number in its metric's unit is refused by the bootstrap
// stage, never published as a number; null (undefined) stays allowed.
import { describe, expect, it } from "vitest";
import * as intervals from "../../src/stats/intervals.js";
import { intervalsOf } from "../../stages/bootstrap.js";
import type { MetricRow } from "../../src/contract/task.js";

const rows: MetricRow[] = Array.from({ length: 20 }, (_, i) => ({
  id: `r${i}`,
  value: i % 2,
  cluster: `c${i}`,
}));
const params = { resamples: 50, seed: 1, rng: "numpy" as const, level: 0.95 };

function run(point: number | null, unit: "proportion" | "score") {
  const metric = { name: "m", label: "m", rows, unit, statistic: "odd" };
  const scored = { metrics: [metric], paired: [] } as unknown as Parameters<typeof intervalsOf>[0];
  return intervalsOf(scored, { odd: () => point }, params, intervals);
}

describe("a statistic's point", () => {
  it.each([
    [Number.NaN, "proportion", /returned NaN for metric m, not a finite number/],
    [Infinity, "score", /returned Infinity for metric m, not a finite number/],
    [5, "proportion", /returned 5 for metric m, outside its unit proportion's range \[0, 1\]/],
  ] as const)("%s in a %s metric is refused", (point, unit, message) => {
    expect(() => run(point, unit)).toThrow(message);
  });

  it.each([
    [0.5, "proportion"],
    [5, "score"],
    [null, "proportion"],
  ] as const)("%s in a %s metric is published", (point, unit) => {
    expect((run(point, unit).metrics.m as { value: unknown }).value).toBe(point);
  });
});
