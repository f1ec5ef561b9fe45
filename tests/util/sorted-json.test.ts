// A body's JSON (src/util/sorted-json.ts) is what its key hashes and what is sent: it must be sortedJson's
// bytes for every value, including the members JSON leaves out, and the parts it serialises once.
import { describe, expect, it } from "vitest";
import { sortedJsonText, fixedPart } from "../../src/util/sorted-json.js";
import { sortedJson } from "../../src/util/json.js";
import seedrandom from "seedrandom";

const long = (s: string) => s.repeat(300);
const nullProto = Object.assign(Object.create(null) as object, { b: 1, a: [2] });

describe("sortedJsonText is sortedJson byte for byte", () => {
  it.each<[string, unknown]>([
    [
      "a body as the model stage makes it",
      { model: "m", messages: [{ role: "user", content: "안녕" }], z: 0 },
    ],
    ["sorted already", { a: 1, b: { c: [true, null] } }],
    [
      "integer-like keys (ordered before others by the engine)",
      { b: 1, "10": 2, "9": 3, a: { "2": 0, "1": 0 } },
    ],
    [
      "keys outside the BMP and escapes",
      { "\u{1F600}": 1, "\uFFFF": 2, 'q"\n': 3, "\u2028": "\u2028\u0000" },
    ],
    ["members JSON leaves out", { a: undefined, b: () => 1, c: Symbol("x"), d: 1 }],
    ["array members JSON writes as null", [undefined, () => 1, Symbol("x"), 1]],
    ["an array with a hole", [1, , 3]], // eslint-disable-line no-sparse-arrays
    ["numbers", { a: -0, b: NaN, c: Infinity, d: 1e21, e: 5e-324, f: 0.1 }],
    ["a null-prototype object", nullProto],
    ["a Date (as sortedJson: a plain copy)", { at: new Date(0) }],
    ["an object with its own toJSON", { x: { toJSON: () => "y", z: 1 } }],
    ["a Buffer", { b: Buffer.from("ab") }],
    ["long strings, twice", { a: long("가"), b: [long("가"), long("x\n")], c: long("가") }],
    ["top-level string", long("s")],
    ["top-level undefined", undefined],
    ["top-level function", () => 1],
    ["empty containers", { a: {}, b: [], c: "" }],
    ["keys in reverse, in place", { z: 1, y: 2, "\uFFFF": 3, "\u{1F600}": 4, a: { c: 1, b: 2, "1": 0 } }],
    [
      "many keys, scrambled",
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 17) % 40}`, i])),
    ],
  ])("%s", (_what, value) => {
    expect(sortedJsonText(value)).toBe(sortedJson(value));
  });

  it("a fixed part: a frozen copy, the same JSON wherever it is, and the original left as it was", () => {
    const schema = { type: "object", properties: { z: { type: "string" }, a: { enum: ["b", null] } } };
    const fixed = fixedPart(schema);
    expect(fixed).not.toBe(schema);
    expect(Object.isFrozen(fixed)).toBe(true);
    expect(Object.isFrozen((fixed as typeof schema).properties.z)).toBe(true);
    expect(Object.isFrozen(schema)).toBe(false);
    const body = { response_format: { schema: fixed }, model: "m" };
    expect(sortedJsonText(body)).toBe(sortedJson(body));
    expect(sortedJsonText(body)).toBe(sortedJson({ response_format: { schema }, model: "m" }));
  });

  it("many distinct long strings: each JSON still right once older ones are dropped", () => {
    const values = Array.from({ length: 3000 }, (_, i) => `${i}:${long("긴 ")}`);
    for (const v of [...values, ...values.slice(0, 10)])
      expect(sortedJsonText({ v })).toBe(sortedJson({ v }));
  });
});

describe("sortedJsonText on random values (seeded)", () => {
  it("equals sortedJson on 2,000 nested values with mixed keys", () => {
    const rng = seedrandom("body-json");
    const pick = <T>(xs: T[]): T => xs[Math.floor(rng() * xs.length)]!;
    const keys = ["a", "b", "B", "é", "0", "1", "10", "9", "01", "-1", "x y", "\u{1F600}", "4294967295"];
    const leaf = () => pick<unknown>([null, true, 0, -0, 1.5, "s", "긴".repeat(300), undefined, NaN]);
    const value = (depth: number): unknown => {
      if (depth === 0 || rng() < 0.3) return leaf();
      if (rng() < 0.4) return Array.from({ length: Math.floor(rng() * 4) }, () => value(depth - 1));
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rng() * 5); i > 0; i--) o[pick(keys)] = value(depth - 1);
      return o;
    };
    for (let i = 0; i < 2000; i++) {
      const v = value(4);
      expect(sortedJsonText(v)).toBe(sortedJson(v));
    }
  });
});
