// sortKeys returns what is already sorted without a copy (src/util/json.ts): the JSON made with it must be
// exactly what the copying sortKeys before it made (kept here as the reference), for keys, JSON lines and
// every result file.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { jsonLines, sortKeys, sortedJson, stableJson } from "../../src/util/json.js";
import { testData } from "../support/helpers.js";

/** sortKeys as it was (always a copy). */
function copySorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copySorted);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = copySorted(v);
    }
    return out;
  }
  return value;
}
const old = (v: unknown) => JSON.stringify(copySorted(v));
const same = (v: unknown) => {
  expect(sortedJson(v)).toBe(old(v));
  expect(stableJson(v)).toBe(JSON.stringify(copySorted(v), null, 2) + "\n");
  expect(jsonLines([v, v])).toBe([v, v].map(old).join("\n") + "\n");
};

describe("sortedJson is JSON.stringify(sortKeys(value))", () => {
  it.each<[string, unknown]>([
    ["null", null],
    ["a string with quotes, escapes, a lone surrogate and Korean", 'a"b\\c\n\t\u0001\ud800 정지'],
    ["numbers", [0, -0, 1.5, -2e-7, 1e21, 123456789012345680000, Number.MAX_VALUE, 5e-324]],
    ["non-finite numbers", [NaN, Infinity, -Infinity, { a: NaN }]],
    ["booleans", [true, false]],
    ["empty containers", [[], {}, [[]], { a: {} }]],
    ["undefined and functions in objects are left out", { a: undefined, b: () => 1, c: 1, d: Symbol("s") }],
    ["undefined and functions in arrays are null", [undefined, () => 1, Symbol("s"), 2]],
    [
      "keys sorted by code unit, nested",
      { b: { z: 1, a: [{ y: 2, x: 1 }] }, a: 1, B: 2, é: 3, "10": 4, "9": 5 },
    ],
    ["a key needing escapes", { 'k"\n': 1 }],
    [
      "integer keys first, ascending (as a JS object orders them)",
      { b: 1, "4294967295": 2, "01": 3, "2": 4, "10": 5 },
    ],
    ["a Date (its own keys, as sortKeys)", { at: new Date(0) }],
    ["top-level undefined", undefined],
    ["an array with a hole", [1, , 3]],
    ["an already sorted record (returned as it is)", { a: [{ b: 1, c: "x" }], d: null }],
    ["a sorted record with a nested unsorted one", { a: { z: 1, y: 2 }, b: [{ d: 1, c: 2 }] }],
    ["an object with its own toJSON", { b: 1, toJSON: () => "x" }],
    ["a Buffer", { data: Buffer.from("ab") }],
    // A dozen keys are sorted in place, many as an array sort; both by code unit (a surrogate before
    // \uFFFF).
    [
      "a record's keys in reverse",
      Object.fromEntries([..."lkjihgfedcba", "\uFFFF", "\u{1F600}"].map((k) => [k, k])),
    ],
    [
      "many keys, scrambled",
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 17) % 40}`, i])),
    ],
  ])("%s", (_what, v) => {
    same(v);
  });

  it("what is already sorted is not copied; what is not, is", () => {
    const sorted = { a: [{ b: 1 }], c: { d: "x" } };
    expect(sortKeys(sorted)).toBe(sorted);
    const unsorted = { c: 1, a: 2 };
    expect(sortKeys(unsorted)).not.toBe(unsorted);
    expect(sortKeys({ a: 1, b: undefined })).toEqual({ a: 1 });
  });

  it("a BigInt is refused, as by JSON.stringify", () => {
    expect(() => sortedJson({ a: 1n })).toThrow(TypeError);
  });

  it("the golden results' every line", () => {
    const dir = testData("contract-golden");
    let lines = 0;
    for (const run of readdirSync(dir, { recursive: true, encoding: "utf8" }))
      if (run.endsWith(".jsonl"))
        for (const l of readFileSync(join(dir, run), "utf8").split("\n").filter(Boolean)) {
          const v = JSON.parse(l) as unknown;
          expect(sortedJson(v)).toBe(old(v));
          expect(sortedJson(v)).toBe(l); // written sorted: read back, written the same
          lines++;
        }
    expect(lines).toBeGreaterThan(1000);
  });
});
