// The product code (src/, stages/, tasks/, bin/) keeps the project's shape rules: every variable and
// parameter has a name that says what it holds (the conventional i, j, k, e, x, y, n and _ aside), and no
// function runs over 60 lines. Counted as scripts/structure/measure.mjs counts them.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO } from "./helpers.js";

const KEPT_LETTERS = new Set(["i", "j", "k", "e", "x", "y", "n", "_"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const bindingNames = (name: ts.BindingName): string[] =>
  ts.isIdentifier(name)
    ? [name.text]
    : name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : bindingNames(element.name)));

/** Single-letter names as `file:line name`, and functions over 60 lines as `file:line length`. */
function shapeProblems(): { letters: string[]; long: string[] } {
  const letters: string[] = [];
  const long: string[] = [];
  const files = ["src", "stages", "tasks", "bin"].flatMap((root) => sourceFiles(join(REPO, root)));
  for (const file of files) {
    const path = relative(REPO, file);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && "body" in node && node.body) {
        const length = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
        if (length > 60) long.push(`${path}:${lineOf(node.getStart(source))} ${length}`);
      }
      if (ts.isVariableDeclaration(node) || ts.isParameter(node))
        for (const name of bindingNames(node.name))
          if (name.length === 1 && !KEPT_LETTERS.has(name))
            letters.push(`${path}:${lineOf(node.getStart(source))} ${name}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { letters, long };
}

describe("the product code keeps the shape rules", () => {
  const problems = shapeProblems();
  it("name every variable and parameter (no single letters but i j k e x y n _)", () => {
    expect(problems.letters).toEqual([]);
  });
  it("have no function over 60 lines", () => {
    expect(problems.long).toEqual([]);
  });
});
