// Every golden vector of tests/data/golden/rng.json, reproduced exactly (gauss within a tolerance: see
// rng.md).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { NumpyGenerator, PCG64, seedSequenceState } from "../../src/stats/pcg64.js";
import { PyRandom } from "../../src/stats/mt19937.js";
import { testData } from "../support/helpers.js";

const golden = JSON.parse(readFileSync(testData("golden/rng.json"), "utf8")) as Record<string, any>;
const times = <T>(n: number, f: () => T) => Array.from({ length: n }, f);
const hex = (x: number) => {
  // float.hex() of a normal double
  if (x === 0) return "0x0.0p+0";
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const bits = buf.getBigUint64(0);
  const sign = bits >> 63n ? "-" : "";
  const exp = Number((bits >> 52n) & 0x7ffn) - 1023;
  const mant = (bits & ((1n << 52n) - 1n)).toString(16).padStart(13, "0");
  return `${sign}0x1.${mant}p${exp >= 0 ? "+" : ""}${exp}`;
};
const floats = (v: { values: number[]; hex: string[] }, got: number[]) => {
  expect(got).toEqual(v.values);
  expect(got.map(hex)).toEqual(v.hex);
};

describe("numpy default_rng", () => {
  it("SeedSequence(0) pool and generate_state", () => {
    const { pool, state } = seedSequenceState(0);
    expect(pool).toEqual(golden.np_seedseq0_pool_u32);
    const u64 = [0, 1, 2, 3].map((k) =>
      ((BigInt(state[2 * k + 1]!) << 32n) | BigInt(state[2 * k]!)).toString(),
    );
    expect(u64).toEqual(golden.np_seedseq0_generate_state_4_u64);
  });
  it("PCG64 state and raw output", () => {
    expect(new PCG64(0).stateDecimal()).toEqual(golden.np_pcg64_seed0_state);
    const g = new PCG64(0);
    expect(times(5, () => g.next64BigInt().toString())).toEqual(golden.np_pcg64_seed0_random_raw_5);
  });
  it("integers(0, 495, 495) three calls in a row", () => {
    const g = new NumpyGenerator(0);
    expect(times(3, () => Array.from(g.integers(0, 495, 495)))).toEqual(
      golden.np_rng0_integers_0_495_size495_first3calls,
    );
  });
  it("random()", () => {
    const g = new NumpyGenerator(0);
    floats(
      golden.np_rng0_random_10,
      times(10, () => g.random()),
    );
    const h = new NumpyGenerator(0);
    expect(times(10, () => (h.random() < 0.5 ? 1 : 0))).toEqual(golden.np_rng0_random_10_lt_half);
  });
  it("choice(620, 620)", () => {
    expect(new NumpyGenerator(0).choice(620, 620)).toEqual(golden.np_rng0_choice_620_620);
  });
  it("interleaved integers and random keep the 32-bit buffer", () => {
    const g = new NumpyGenerator(0);
    const iv = golden.np_rng0_interleave;
    expect(Array.from(g.integers(0, 495, 3))).toEqual(iv.integers_0_495_3);
    floats(
      iv.random_2,
      times(2, () => g.random()),
    );
    expect(Array.from(g.integers(0, 495, 3))).toEqual(iv.integers_0_495_3_again);
  });
  it("wide ranges, offsets, other seeds, permutation", () => {
    expect(Array.from(new NumpyGenerator(0).integers(0, 3000000000, 5))).toEqual(
      golden.np_rng0_integers_0_3000000000_5,
    );
    expect(Array.from(new NumpyGenerator(0).integers(0, 2 ** 40, 5)).map(String)).toEqual(
      golden.np_rng0_integers_0_2pow40_5,
    );
    expect(Array.from(new NumpyGenerator(0).integers(10, 20, 5))).toEqual(golden.np_rng0_integers_10_20_5);
    expect(new NumpyGenerator(0).permutation(10)).toEqual(golden.np_rng0_permutation_10);
    expect(Array.from(new NumpyGenerator(12345).integers(0, 1000, 8))).toEqual(
      golden.np_rng12345_integers_0_1000_8,
    );
  });
});

describe("CPython random.Random", () => {
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  it("random()", () => {
    const r = new PyRandom(0);
    floats(
      golden.py_Random0_random_5,
      times(5, () => r.random()),
    );
    floats(golden.py_Random42_random_1, [new PyRandom(42).random()]);
    const m = new PyRandom(42);
    floats(
      golden.py_module_seed42_random_5,
      times(5, () => m.random()),
    );
    const big = new PyRandom(2n ** 40n + 7n);
    floats(
      golden.py_Random_2pow40p7_random_3,
      times(3, () => big.random()),
    );
    floats(golden.py_Random_neg3_random_1, [new PyRandom(-3).random()]);
  });
  it("randrange, randint, choice", () => {
    const r = new PyRandom(0);
    expect(times(10, () => r.randrange(219))).toEqual(golden.py_Random0_randrange_219_x10);
    const c = new PyRandom(0);
    expect(times(10, () => c.choice(range(219)))).toEqual(golden.py_Random0_choice_range219_x10);
    const w = new PyRandom(0);
    expect(times(3, () => w.randrange(2 ** 40))).toEqual(golden.py_Random0_randrange_2pow40_x3);
    const d = new PyRandom(0);
    expect(times(10, () => d.randint(1, 6))).toEqual(golden.py_Random0_randint_1_6_x10);
  });
  it("getrandbits", () => {
    const r = new PyRandom(0);
    expect(times(3, () => r.getrandbits(32))).toEqual(golden.py_Random0_getrandbits_32_x3);
    expect(new PyRandom(0).getrandbitsBig(64)).toBe(BigInt(golden.py_Random0_getrandbits_64));
  });
  it("choices, weighted choices, shuffle, sample", () => {
    expect(new PyRandom(0).choices(range(219), 219)).toEqual(golden.py_Random0_choices_range219_k219);
    expect(new PyRandom(0).choices(range(5), 10, [1, 2, 3, 4, 5])).toEqual(
      golden.py_Random0_choices_weighted,
    );
    expect(new PyRandom(0).shuffle(range(20))).toEqual(golden.py_Random0_shuffle_range20);
    expect(new PyRandom(0).sample(range(219), 10)).toEqual(golden.py_Random0_sample_range219_10);
    expect(new PyRandom(0).sample(range(30), 20)).toEqual(golden.py_Random0_sample_range30_20);
  });
  it("uniform", () => {
    const r = new PyRandom(42);
    floats(
      golden.py_Random42_uniform_1_3_x3,
      times(3, () => r.uniform(1, 3)),
    );
  });
  it("gauss agrees only within a tolerance (log/cos/sin differ in the last bit between libms)", () => {
    const r = new PyRandom(42);
    const got = times(6, () => r.gauss());
    golden.py_Random42_gauss_6.values.forEach((v: number, i: number) =>
      expect(Math.abs(got[i]! - v)).toBeLessThanOrEqual(1e-14 * Math.max(1, Math.abs(v))),
    );
  });
});
