// The product code (src/, stages/, tasks/, bin/) keeps the project's shape rules: every variable and
// parameter has a name that says what it holds (the conventional i, j, k, e, x, y, n and _ aside), and no
// function runs over 60 lines. Counted by scripts/structure/measure.mjs, the script that prints the figures.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_PARAMETERS, measure, readStructure, summary } from "../scripts/structure/measure.mjs";
import { REPO } from "./helpers.js";

describe("the product code keeps the shape rules", () => {
  const facts = summary(measure(REPO), readStructure(REPO), null, REPO);
  it("name every variable and parameter (no single letters but i j k e x y n _)", () => {
    expect(facts.singleLetterOutsideKept).toEqual([]);
  });
  it("have no function over 60 lines", () => {
    expect(facts.functionsOver60).toEqual([]);
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
        `export function many(${parameters.join(", ")}): void {}`,
        "",
      ].join("\n"),
    );
    const facts = summary(measure(repo), { floors: new Map(), rooms: new Map() }, null, repo);
    expect(facts.functionsOver60).toEqual(["src/long.ts:1 long (63 lines)"]);
    expect(facts.singleLetterOutsideKept).toEqual(["src/long.ts:64 q"]);
    expect(facts.functionsOverFiveParameters).toEqual([
      `src/long.ts:65 many (${MAX_PARAMETERS + 1} parameters)`,
    ]);
    expect(facts.buildCommandLines).toBeNull();
  });
});
