// drawResamples keeps the draws of earlier calls (src/stats/intervals.ts): a call served from them must see
// exactly the indices a fresh generator draws, for both generators, before and after others were kept.
import { describe, expect, it } from "vitest";
import { drawResamples, forgetDraws, keptDrawBytes } from "../../src/stats/intervals.js";
import { NumpyGenerator } from "../../src/stats/pcg64.js";
import { PyRandom } from "../../src/stats/mt19937.js";

const collect = (rng: "numpy" | "python", seed: number, resamples: number, g: number) => {
  const out: number[][] = [];
  drawResamples(rng, seed, resamples, g, (idx) => out.push(Array.from(idx)));
  return out;
};
const fresh = (rng: "numpy" | "python", seed: number, resamples: number, g: number) => {
  const out: number[][] = [];
  const idx = new Int32Array(g);
  const np = new NumpyGenerator(seed);
  const py = new PyRandom(seed);
  for (let b = 0; b < resamples; b++) {
    if (rng === "numpy") np.integers(0, g, g, idx);
    else py.choicesIndex(g, g, idx);
    out.push(Array.from(idx));
  }
  return out;
};

describe("kept draws are the generator's draws", () => {
  it.each<["numpy" | "python", number, number, number]>([
    ["numpy", 0, 50, 7],
    ["python", 0, 50, 7],
    ["numpy", 3, 20, 1],
    ["python", 1, 10, 300],
  ])("%s seed %i, %i resamples of %i", (rng, seed, resamples, g) => {
    const want = fresh(rng, seed, resamples, g);
    expect(collect(rng, seed, resamples, g)).toEqual(want); // drawn, then kept
    collect(rng, seed + 1, resamples, g); // another kept between
    expect(collect(rng, seed, resamples, g)).toEqual(want); // from the kept draws
  });
  it("draws too large to keep are drawn again, the same", () => {
    const want = fresh("numpy", 0, 3, 3_000_000).map((d) => d.slice(0, 50));
    const head = () => collect("numpy", 0, 3, 3_000_000).map((d) => d.slice(0, 50));
    expect(head()).toEqual(want);
    collect("numpy", 1, 3, 7); // another kept between
    expect(head()).toEqual(want); // not kept: drawn again, the same
  });

  it("are kept in two bytes an index below 65,536 clusters, in four above, and drawn again the same", () => {
    forgetDraws();
    const small = fresh("python", 5, 4, 9);
    expect(collect("python", 5, 4, 9)).toEqual(small);
    expect(keptDrawBytes()).toBe(4 * 9 * 2);
    expect(collect("python", 5, 4, 9)).toEqual(small); // from the kept draws
    const large = fresh("numpy", 2, 3, 70_000); // indices up to 69,999: two bytes would wrap them
    expect(collect("numpy", 2, 3, 70_000)).toEqual(large);
    expect(keptDrawBytes()).toBe(4 * 9 * 2 + 3 * 70_000 * 4);
    expect(collect("numpy", 2, 3, 70_000)).toEqual(large); // from the kept draws
  });

  it("hold every index at the edges: 65,536 clusters in two bytes, 65,537 in four", () => {
    for (const [clusters, bytesEach] of [
      [65_536, 2],
      [65_537, 4],
    ]) {
      forgetDraws();
      const want = fresh("numpy", 0, 3, clusters!);
      // The largest index is drawn: two bytes would wrap it above 65,536 clusters.
      expect(Math.max(...want.map((draw) => Math.max(...draw)))).toBe(clusters! - 1);
      expect(collect("numpy", 0, 3, clusters!)).toEqual(want);
      expect(keptDrawBytes()).toBe(3 * clusters! * bytesEach!);
      expect(collect("numpy", 0, 3, clusters!)).toEqual(want); // from the kept draws
    }
  });

  it("are let go by forgetDraws (a bootstrap stage's end), and drawn again the same", () => {
    const want = fresh("python", 5, 4, 9);
    collect("python", 5, 4, 9);
    expect(keptDrawBytes()).toBeGreaterThan(0);
    forgetDraws();
    expect(keptDrawBytes()).toBe(0);
    expect(collect("python", 5, 4, 9)).toEqual(want);
  });
});
