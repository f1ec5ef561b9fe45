// The generators' long streams against references written from their definitions in BigInt (slow, plain):
// the golden vectors (rng.test.ts) hold the first draws, these hold every bit of hundreds of thousands,
// the carries of PCG64's step and each bounded draw's rejection included (src/stats/pcg64.ts writes the
// step out for speed; docs/performance.md, "The bootstrap's draws").
import { describe, expect, it } from "vitest";
import { NumpyGenerator, PCG64 } from "../../src/stats/pcg64.js";

const M128 = (1n << 128n) - 1n;
const M64 = (1n << 64n) - 1n;
const MULTIPLIER = 0x2360ed051fc65da44385df649fccf645n;

/** PCG64 (XSL-RR 128/64) as numpy's pcg64.h defines it, from a state and increment. */
function referencePcg64(state: bigint, inc: bigint) {
  let has32 = false;
  let held = 0n;
  const next64 = (): bigint => {
    state = (state * MULTIPLIER + inc) & M128;
    const rot = state >> 122n;
    const xored = ((state >> 64n) ^ state) & M64;
    return ((xored >> rot) | (xored << ((64n - rot) & 63n))) & M64;
  };
  const next32 = (): bigint => {
    if (has32) {
      has32 = false;
      return held;
    }
    const out = next64();
    has32 = true;
    held = out >> 32n;
    return out & 0xffffffffn;
  };
  /** numpy's buffered_bounded_lemire_uint32 for a range of rng + 1 values. */
  const lemire = (rng: bigint): bigint => {
    const excl = rng + 1n;
    let product = next32() * excl;
    let leftover = product & 0xffffffffn;
    if (leftover < excl) {
      const threshold = (0x100000000n - excl) % excl;
      while (leftover < threshold) {
        product = next32() * excl;
        leftover = product & 0xffffffffn;
      }
    }
    return product >> 32n;
  };
  return { next64, lemire, state: () => state };
}

const fromSeed = (seed: number) => {
  const { state, inc } = new PCG64(seed).stateDecimal();
  return referencePcg64(BigInt(state), BigInt(inc));
};

describe("PCG64's long stream", () => {
  it.each([0, 1, 12345])("seed %i: 100,000 raw outputs and the state after", (seed) => {
    const ours = new PCG64(seed);
    const reference = fromSeed(seed);
    for (let i = 0; i < 100_000; i++) {
      const got = ours.next64BigInt();
      const want = reference.next64();
      if (got !== want) expect(`${i}: ${got}`).toBe(`${i}: ${want}`);
    }
    expect(BigInt(ours.stateDecimal().state)).toBe(reference.state());
  });
});

describe("integers(0, n, size): numpy's bounded draws over the stream", () => {
  // small ranges (a product exact in a double), wide ones (split products) and ones that reject often
  it.each([2, 210, 630, 2_097_152, 3_000_001, 2 ** 31 + 1, 4_294_967_295])(
    "n = %i, 60,000 draws in calls of 600",
    (bound) => {
      const ours = new NumpyGenerator(7);
      const reference = fromSeed(7);
      const idx = new Int32Array(600);
      for (let call = 0; call < 100; call++) {
        const got =
          bound <= 2 ** 31 ? Array.from(ours.integers(0, bound, 600, idx)) : ours.integers(0, bound, 600);
        const want = Array.from({ length: 600 }, () => Number(reference.lemire(BigInt(bound - 1))));
        expect(got).toEqual(want);
      }
    },
  );
});
