// Every case of tests/data/golden/stats/cases.json through the real CLI; bootstrap numbers identical to the
// bit, Clopper-Pearson bounds and McNemar p within 1e-12 relative (statistics.md).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { execa } from "execa";
import { BIN } from "../support/rig.js";
import { testData } from "../support/helpers.js";
import { mcnemarExact, percentile } from "../../src/stats/intervals.js";

const dir = testData("golden/stats");
const cases = (
  JSON.parse(readFileSync(resolve(dir, "cases.json"), "utf8")) as {
    cases: { args: string[]; expected: Record<string, unknown> }[];
  }
).cases;

describe("medbench stats matches the reference", () => {
  it("has reference cases of each kind (an empty or emptied cases.json would check nothing)", () => {
    const kinds = new Set(cases.map((c) => `${c.args[0]}/${String(c.expected.method ?? "")}`));
    expect([...kinds].sort()).toEqual(["ci/bootstrap", "ci/clopper-pearson", "paired/"]);
  });

  it.each(cases.map((c) => [c.args.join(" "), c] as const))("%s", async (_, c) => {
    const r = await execa("node", [BIN, "stats", ...c.args], { cwd: dir, reject: false });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const got = JSON.parse(String(r.stdout)) as Record<string, unknown>;
    expect(Object.keys(got).sort()).toEqual(Object.keys(c.expected).sort());
    const approx = got.method === "clopper-pearson" ? ["lo", "hi"] : [];
    for (const [k, v] of Object.entries(c.expected)) {
      if (approx.includes(k) || k === "mcnemar_p") {
        const e = v as number;
        expect(Math.abs((got[k] as number) - e)).toBeLessThanOrEqual(
          1e-12 * Math.max(Math.abs(e), Number.MIN_VALUE),
        );
      } else {
        expect(got[k], k).toStrictEqual(v);
      }
    }
  });

  it("refuses sets that do not hold the same items", async () => {
    const r = await execa(
      "node",
      [
        BIN,
        "stats",
        "paired",
        "--a",
        "paired_a.jsonl",
        "--b",
        "allwrong.jsonl",
        "--value",
        "correct",
        "--id",
        "id",
      ],
      { cwd: dir, reject: false },
    );
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toMatch(/no field `correct`|do not hold the same items/);
  });
});

describe("percentile and McNemar", () => {
  it("numpy's linear percentile", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([5], 97.5)).toBe(5);
    expect(percentile([3, 1, 2], 100)).toBe(3);
  });
  it("exact McNemar", () => {
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(0, 5)).toBe(0.0625); // 2 * 1/32
    expect(mcnemarExact(1, 9)).toBeCloseTo((2 * (1 + 10)) / 1024, 15);
  });
});
