// Task code as careful authors write it, run by a real build of a task of the user's repository: no pattern
// here is refused by the source rules or by isolation, and each computes in the stage's own process what it
// computes in the test's (its compiled module, loaded here). Each pattern is a module of the task folder
// exporting probe(); the scorer puts every probe's value in its tables.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { symlinkSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { Project, type Run } from "../support/rig.js";
import { REPO } from "../support/helpers.js";

interface Pattern {
  name: string;
  /** The module's source: it exports probe(), whose value is JSON. */
  source: string;
}

const fn = (body: string) => `export function probe() {\n${body}\n}\n`;

const PATTERNS: Pattern[] = [
  { name: "a helper function", source: `const twice = (n: number) => n * 2;\n${fn("return twice(21);")}` },
  {
    name: "helpers composed",
    source: `const trim = (s: string) => s.trim();\nconst lower = (s: string) => s.toLowerCase();\n${fn(
      'return [trim, lower].reduce((acc, f) => f(acc), "  MiXeD ");',
    )}`,
  },
  {
    name: "a class with static state",
    source: `class Counter { static count = 0; static next() { return ++Counter.count; } }\n${fn(
      "Counter.next(); Counter.next(); return Counter.next();",
    )}`,
  },
  {
    name: "a class with private fields",
    source:
      "class Box { #v: number; constructor(v: number) { this.#v = v; } " +
      `get v() { return this.#v; } }\n${fn("return new Box(7).v;")}`,
  },
  {
    name: "a Map of counts",
    source: fn(
      "const m = new Map<string, number>();\n" +
        'for (const w of "a b a c a".split(" ")) m.set(w, (m.get(w) ?? 0) + 1);\nreturn [...m];',
    ),
  },
  { name: "a Set", source: fn("return [...new Set([3, 1, 3, 2, 1])];") },
  {
    name: "a regex table",
    source: `const RULES: [RegExp, string][] = [[/^stop\\b/i, "stop"], [/^go\\b/i, "go"]];\n${fn(
      'return ["Stop now", "go", "wait"].map((t) => RULES.find(([re]) => re.test(t))?.[1] ?? null);',
    )}`,
  },
  {
    name: "named capture groups",
    source: fn('const m = /(?<n>\\d+)\\s*(?<u>mm|cm)/.exec("cut 12 mm");\nreturn m?.groups ?? null;'),
  },
  {
    name: "Intl.NumberFormat with a locale",
    source: fn('return new Intl.NumberFormat("en-US").format(1234567.891);'),
  },
  {
    name: "Intl.DateTimeFormat with a locale and zone",
    source: fn('return new Intl.DateTimeFormat("en-GB", { timeZone: "UTC" }).format(Date.UTC(2020, 0, 2));'),
  },
  {
    name: "Intl.Collator with a locale",
    source: fn('return ["다", "가", "나"].sort(new Intl.Collator("ko").compare);'),
  },
  { name: "localeCompare with a locale", source: fn('return "a".localeCompare("b", "en");') },
  { name: "toLocaleString with a locale", source: fn('return (1234.5).toLocaleString("en-US");') },
  { name: "Number#toString(radix)", source: fn("return (255).toString(16);") },
  { name: "Array#toString", source: fn("return [1, 2, 3].toString();") },
  { name: "valueOf", source: fn("return new Number(5).valueOf() + Object(2).valueOf();") },
  {
    name: "hasOwnProperty",
    source: fn('const o: any = { a: 1 };\nreturn [o.hasOwnProperty("a"), o.hasOwnProperty("b")];'),
  },
  {
    name: "Object.prototype.hasOwnProperty.call",
    source: fn('return Object.prototype.hasOwnProperty.call({ k: 0 }, "k");'),
  },
  {
    name: "JSON data imported",
    source: `import table from "./pattern-data.json";\n${fn("return table.units;")}`,
  },
  {
    name: "JSON.parse and stringify",
    source: fn('return JSON.stringify(JSON.parse(\'{"b":1,"a":[2]}\'));'),
  },
  {
    name: "an async function",
    source: `async function later(n: number): Promise<number> { return n + 1; }\n${fn(
      "return later.constructor.name + String(typeof later(1).then);",
    )}`,
  },
  {
    name: "a generator",
    source:
      `function* upTo(n: number) { for (let i = 0; i < n; i++) yield i; }\n` +
      `${fn("return [...upTo(4)];")}`,
  },
  {
    name: "destructuring and spread",
    source: fn("const { a, ...rest } = { a: 1, b: 2, c: 3 };\nreturn [a, rest];"),
  },
  {
    name: "optional chaining and ??",
    source: fn("const o: any = { x: { y: null } };\nreturn [o.x?.y ?? 'none', o.z?.w];"),
  },
  { name: "template literals", source: fn("const n = 3;\nreturn `n=${n}, twice=${n * 2}`;") },
  {
    name: "flatMap and reduce",
    source: fn("return [[1, 2], [3]].flatMap((x) => x).reduce((s, x) => s + x, 0);"),
  },
  {
    name: "a sort with a comparator",
    source: fn("return [{ k: 2 }, { k: 1 }, { k: 3 }].sort((l, r) => l.k - r.k).map((x) => x.k);"),
  },
  { name: "Unicode normalisation", source: fn('return "\\u1100\\u1161".normalize("NFC").length;') },
  { name: "a Unicode regex", source: fn('return "수술 robot 3".match(/\\p{L}+/gu);') },
  { name: "BigInt", source: fn("return String(2n ** 70n);") },
  { name: "Math", source: fn("return [Math.round(2.5), Math.log2(8), Math.max(1, 9, 4)];") },
  { name: "toFixed", source: fn("return (2 / 3).toFixed(4);") },
  { name: "a fixed date", source: fn('return new Date("2020-01-01T00:00:00Z").toISOString();') },
  {
    name: "a memo in a module-level Map",
    source:
      `const memo = new Map<number, number>();\n` +
      "const fib = (n: number): number => n < 2 ? n : " +
      `memo.get(n) ?? (memo.set(n, fib(n - 1) + fib(n - 2)), memo.get(n)!);\n${fn("return fib(40);")}`,
  },
  {
    name: "a TypeScript enum",
    source: `enum Side { Left = "L", Right = "R" }\n${fn("return [Side.Left, Side.Right];")}`,
  },
  {
    name: "an as-const table",
    source: `const LEVELS = { low: 1, high: 3 } as const;\n${fn("return LEVELS.high - LEVELS.low;")}`,
  },
  {
    name: "an iterator of its own",
    source:
      `class Range { constructor(private n: number) {}\n` +
      `  *[Symbol.iterator]() { for (let i = 0; i < this.n; i++) yield i * i; } }\n${fn(
        "return [...new Range(4)];",
      )}`,
  },
  {
    name: "a WeakMap cache",
    source:
      `const seen = new WeakMap<object, number>();\nconst key = {};\n` +
      `${fn("seen.set(key, 5);\nreturn seen.get(key);")}`,
  },
  {
    name: "an Error subclass, thrown and caught",
    source: `class ParseFailure extends Error {}\n${fn(
      'try { throw new ParseFailure("bad"); } ' +
        "catch (e) { return [e instanceof ParseFailure, (e as Error).message]; }",
    )}`,
  },
  {
    name: "JSON.parse with a fallback",
    source: fn(
      'let out: unknown;\ntry { out = JSON.parse("{oops"); } catch { out = "fallback"; }\nreturn out;',
    ),
  },
  {
    name: "Object.entries and fromEntries",
    source: fn("return Object.fromEntries(Object.entries({ a: 1, b: 2 }).map(([k, v]) => [k, v * 10]));"),
  },
  { name: "Array.from", source: fn("return Array.from({ length: 4 }, (_, i) => i * 3);") },
  {
    name: "structuredClone",
    source: fn(
      "const o = { a: [1, { b: 2 }] };\nconst c = structuredClone(o);\n" +
        "return c.a !== o.a && JSON.stringify(c) === JSON.stringify(o);",
    ),
  },
  { name: "TextEncoder", source: fn('return new TextEncoder().encode("수술").length;') },
  { name: "encodeURIComponent", source: fn('return encodeURIComponent("a b/수");') },
  {
    name: "replaceAll and a sticky regex",
    source: fn(
      'const re = /\\d/y;\nre.lastIndex = 1;\nreturn ["a-b-c".replaceAll("-", "+"), re.test("a1")];',
    ),
  },
  {
    name: "lodash",
    source:
      `import _ from "lodash";\n` +
      `${fn('return [_.chunk([1, 2, 3, 4, 5], 2), _.groupBy(["one", "two", "three"], "length")];')}`,
  },
  {
    name: "a lodash function by its own module",
    source:
      `import sortBy from "lodash/sortBy";\n` +
      `${fn('return sortBy([{ n: "b" }, { n: "a" }], "n").map((x: any) => x.n);')}`,
  },
];

const moduleName = (i: number) => `pattern-${String(i).padStart(2, "0")}`;

describe("legitimate task code: none refused, each computing in isolation what it computes outside", () => {
  let p: Project;
  let built: Run;
  let probes: Record<string, unknown> = {};

  beforeAll(async () => {
    p = new Project(false);
    for (const args of [["init"], ["new-task", "t1"]]) expect((await p.run(args)).exitCode).toBe(0);
    mkdirSync(p.path("node_modules"));
    symlinkSync(join(REPO, "node_modules", "lodash"), p.path("node_modules", "lodash"));
    p.write("tasks/t1/pattern-data.json", '{ "units": ["mm", "cm"] }\n');
    PATTERNS.forEach((pattern, i) => p.write(`tasks/t1/${moduleName(i)}.ts`, pattern.source));
    const imports = PATTERNS.map((_, i) => `import * as p${i} from "./${moduleName(i)}.js";\n`).join("");
    const calls = PATTERNS.map((_, i) => `"${moduleName(i)}": p${i}.probe()`).join(", ");
    p.edit("tasks/t1/scorer.ts", (text) => {
      const out =
        imports +
        text.replace(
          "tables: { items: items.length }",
          `tables: { items: items.length, probes: { ${calls} } }`,
        );
      expect(out).not.toBe(imports + text);
      return out;
    });
    built = await p.run(["build", "specs/t1.yaml", "--json"]);
    if (built.exitCode === 0) {
      const results = p.path("results");
      const metrics = readdirSync(results, { recursive: true })
        .map(String)
        .find((rel) => rel.endsWith("metrics.json"))!;
      probes = (
        JSON.parse(readFileSync(join(results, metrics), "utf8")) as {
          tables: { probes: Record<string, unknown> };
        }
      ).tables.probes;
    }
  });
  afterAll(() => p.remove());

  it("holds at least 40 patterns, and the build that runs them all is not refused", () => {
    expect(PATTERNS.length).toBeGreaterThanOrEqual(40);
    expect(built.exitCode, built.stderr).toBe(0);
  });

  it.each(PATTERNS.map((pattern, i) => [pattern.name, i] as const))("%s", (_name, i) => {
    expect(built.stderr).not.toContain(`${moduleName(i)}.ts`);
    const compiled = p.path("cache/compiled/tasks/t1", `${moduleName(i)}.js`);
    const outside = (createRequire(compiled)(compiled) as { probe(): unknown }).probe();
    expect(probes[moduleName(i)]).toEqual(JSON.parse(JSON.stringify(outside)));
  });
});
