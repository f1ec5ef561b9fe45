// The beta quantile medbench loads (dist/vendor/beta-quantile.cjs, the @stdlib package's modules joined into
// one file by scripts/bundle-vendor.mjs) gives the package's own quantile to the bit: every Clopper-Pearson
// bound a run of up to 400 items can ask for, at three levels, and a spread of other arguments. The
// packages' `debug` logger is replaced by one that writes nothing (its load took tty: 3.5 ms of 14).
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";

type Quantile = (probability: number, alpha: number, beta: number) => number;
const require = createRequire(join(REPO, "package.json"));
const bundled = require(join(REPO, "dist/vendor/beta-quantile.cjs")) as Quantile;
const own = require("@stdlib/stats-base-dists-beta-quantile") as Quantile;

/** The arguments clopperPearson (src/stats/intervals.ts) passes for k of n at `level`. */
function clopperArguments(n: number, level: number): [number, number, number][] {
  const alpha = 1 - level;
  const out: [number, number, number][] = [];
  for (let k = 0; k <= n; k++) {
    if (k > 0) out.push([alpha / 2, k, n - k + 1]);
    if (k < n) out.push([1 - alpha / 2, k + 1, n - k]);
  }
  return out;
}

describe("the bundled beta quantile", () => {
  it("is a separate copy, not the package's module", () => {
    expect(bundled).not.toBe(own);
    // Not a wrapper around the package either: the file loads no @stdlib module.
    expect(readFileSync(join(REPO, "dist/vendor/beta-quantile.cjs"), "utf8")).not.toMatch(
      /require\(["']@stdlib\//,
    );
  });

  it("loads no tty: its logger (debug, for gammaincinv's warnings) is one that writes nothing", async () => {
    const code = `require(${JSON.stringify(join(REPO, "dist/vendor/beta-quantile.cjs"))})(0.5, 2, 3);
      console.log(JSON.stringify(process.moduleLoadList))`;
    const loaded = JSON.parse(
      (await execa("node", ["-e", code], { env: { DEBUG: "*" } })).stdout,
    ) as string[];
    expect(loaded).toContain("NativeModule fs"); // the list is read
    expect(loaded.filter((m) => /tty/.test(m))).toEqual([]);
  });

  it("gives the package's quantile to the bit for every Clopper-Pearson bound up to 400 items", () => {
    let compared = 0;
    for (const level of [0.9, 0.95, 0.99])
      for (let n = 1; n <= 400; n += n < 40 ? 1 : 7)
        for (const [p, a, b] of clopperArguments(n, level)) {
          const [want, got] = [own(p, a, b), bundled(p, a, b)];
          if (!Object.is(got, want)) expect({ p, a, b, got }).toEqual({ p, a, b, got: want });
          compared++;
        }
    expect(compared).toBeGreaterThan(10_000);
  });

  it("keeps every joined module's licence notice, each notice once", () => {
    const text = readFileSync(join(REPO, "dist/vendor/beta-quantile.cjs"), "utf8");
    const notices = text.match(/^\/\*\*\n\* @license[\s\S]*?\*\/$/gm) ?? [];
    expect(new Set(notices).size).toBe(notices.length); // 411 copies of 46 notices before
    const modules = [...text.matchAll(/^\/\/ (node_modules\/\S+\.js)$/gm)].map((match) => match[1]!);
    expect(modules.length).toBeGreaterThan(400);
    for (const module of modules) {
      const own = /^\/\*\*\n\* @license[\s\S]*?\*\//m.exec(readFileSync(join(REPO, module), "utf8"));
      if (own) expect(notices, module).toContain(own[0]);
    }
  });

  it("and for fractional shapes, the edges and refused arguments", () => {
    for (const p of [0, 1e-12, 0.001, 0.3, 0.5, 0.999, 1, -0.1, 1.1, NaN])
      for (const a of [0.01, 0.5, 1, 2.5, 1e3, 0, -1, NaN])
        for (const b of [0.02, 0.5, 1, 7.25, 1e4, 0, NaN])
          expect(Object.is(bundled(p, a, b), own(p, a, b)), `${p} ${a} ${b}`).toBe(true);
  });
});
