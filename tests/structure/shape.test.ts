// The product code (src/, stages/, tasks/, bin/) keeps the project's shape rules: every variable and
// parameter has a name that says what it holds (only i, e and x are kept as single letters), no
// function runs over 60 lines, and none takes more than five parameters. No line of it, of the tests or of
// the scripts is 110 columns wide or more. Counted by scripts/structure/measure.mjs, the script that prints
// the figures.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  COLUMN_LIMIT,
  MAX_PARAMETERS,
  measure,
  readStructure,
  summary,
} from "../../scripts/structure/measure.mjs";
import { callers } from "../../scripts/structure/callers.mjs";
import { REPO } from "../support/helpers.js";

describe("the product code keeps the shape rules", () => {
  const facts = summary(measure(REPO), readStructure(REPO), null, REPO);
  it("name every variable and parameter (no single letters but i e x)", () => {
    expect(facts.singleLetterOutsideKept).toEqual([]);
  });
  it("have no function over 60 lines", () => {
    expect(facts.functionsOver60).toEqual([]);
  });
  it("have no function over five parameters (a named context object instead)", () => {
    expect(facts.functionsOverFiveParameters).toEqual([]);
  });
  it(`have no line of ${COLUMN_LIMIT} columns or more, nor have the tests and scripts`, () => {
    expect(facts.longLines).toEqual([]);
  });
});

describe("the measuring script", () => {
  it("counts a long function, a single-letter name and a long parameter list where they are", () => {
    const repo = mkdtempSync(join(tmpdir(), "medbench-shape-"));
    mkdirSync(join(repo, "src"));
    const body = Array.from({ length: 61 }, (_, index) => `  const line${index} = ${index};`);
    const parameters = Array.from({ length: MAX_PARAMETERS + 1 }, (_, index) => `p${index}: number`);
    writeFileSync(
      join(repo, "src/long.ts"),
      [
        "export function long(): void {",
        ...body,
        "}",
        "export const short = (q: number) => q;",
        "export const pair = (n: number, k: number, _: number) => n + k;",
        `export function many(${parameters.join(", ")}): void {}`,
        "",
      ].join("\n"),
    );
    const facts = summary(measure(repo), { floors: new Map(), rooms: new Map() }, null, repo);
    expect(facts.functionsOver60).toEqual(["src/long.ts:1 long (63 lines)"]);
    expect(facts.singleLetterOutsideKept).toEqual([
      "src/long.ts:64 q",
      "src/long.ts:65 n",
      "src/long.ts:65 k",
      "src/long.ts:65 _",
    ]);
    expect(facts.functionsOverFiveParameters).toEqual([
      `src/long.ts:66 many (${MAX_PARAMETERS + 1} parameters)`,
    ]);
    expect(facts.buildCommandLines).toBeNull();
    expect(facts.longLines).toEqual([]);
  });

  it("counts a line of 110 columns or more in code points, in tests and scripts too", () => {
    const repo = mkdtempSync(join(tmpdir(), "medbench-columns-"));
    for (const folder of ["src", "tests/support", "scripts"])
      mkdirSync(join(repo, folder), { recursive: true });
    const line = (columns: number, letter = "x") => `// ${letter.repeat(columns - 3)}`;
    // 109 columns of two-byte letters: 215 bytes, still under the limit.
    writeFileSync(join(repo, "src/narrow.ts"), [line(COLUMN_LIMIT - 1, "é"), ""].join("\n"));
    writeFileSync(join(repo, "tests/support/wide.cjs"), ["", line(COLUMN_LIMIT), ""].join("\n"));
    writeFileSync(join(repo, "scripts/wide.mjs"), [line(COLUMN_LIMIT + 5, "é"), ""].join("\n"));
    writeFileSync(join(repo, "scripts/notes.md"), line(COLUMN_LIMIT + 5));
    const facts = summary(measure(repo), { floors: new Map(), rooms: new Map() }, null, repo);
    expect(facts.longLines.sort()).toEqual([
      `scripts/wide.mjs:1 (${COLUMN_LIMIT + 5} columns)`,
      `tests/support/wide.cjs:2 (${COLUMN_LIMIT} columns)`,
    ]);
  });

  it("counts a function's callers: named functions, a callback as its function, recursion left out", () => {
    const repo = mkdtempSync(join(tmpdir(), "medbench-callers-"));
    mkdirSync(join(repo, "src"));
    writeFileSync(join(repo, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true } }));
    const files = { helper: join(repo, "src/helper.ts"), user: join(repo, "src/user.ts") };
    writeFileSync(
      files.helper,
      [
        "export function once(count: number): number {",
        "  return count > 0 ? once(count - 1) : 0;",
        "}",
        "export const twice = (count: number) => count * 2;",
        "export const never = () => 0;",
        "",
      ].join("\n"),
    );
    writeFileSync(
      files.user,
      [
        'import { once, twice } from "./helper.js";',
        "export function first(values: number[]): number[] {",
        "  return values.map((value) => once(value) + twice(value)).concat(once(1));",
        "}",
        "export const second = (value: number) => twice(value);",
        "",
      ].join("\n"),
    );
    // once: first (twice, once in a callback); twice: first and second; never, first, second: no caller.
    expect(callers(repo, Object.values(files))).toEqual({ single: 1, called: 2, uncalled: 3, percent: 50 });
  });
});
