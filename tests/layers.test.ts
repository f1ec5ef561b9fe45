// The product code's folders stand on floors (scripts/structure/floors.json): an import, of a value or of a
// type, runs down a floor or stays on its own, never up; so the folders form no cycle either.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { folderCycles, folderOf, measure, type ImportEdge } from "../scripts/structure/measure.mjs";
import { REPO } from "./helpers.js";

interface Floors {
  floors: { folders: string[]; why: string }[];
}

const floors: Floors = JSON.parse(readFileSync(join(REPO, "scripts/structure/floors.json"), "utf8"));
const floorOf = new Map(floors.floors.flatMap((floor, level) => floor.folders.map((f) => [f, level])));
const edges: ImportEdge[] = measure(REPO).edges;

/** Every product file reachable from `start` by its imports (values and types). */
function reachable(start: string[]): Set<string> {
  const seen = new Set(start);
  const queue = [...start];
  while (queue.length > 0) {
    const file = queue.pop()!;
    for (const edge of edges)
      if (edge.from === file && !seen.has(edge.to)) {
        seen.add(edge.to);
        queue.push(edge.to);
      }
  }
  return seen;
}

describe("floors", () => {
  it("every folder of the product code stands on a floor", () => {
    const folders = new Set(edges.flatMap((edge) => [folderOf(edge.from), folderOf(edge.to)]));
    expect([...folders].filter((folder) => !floorOf.has(folder)).sort()).toEqual([]);
  });

  it("no import, of a value or a type, runs up a floor", () => {
    const upward = edges
      .filter((edge) => (floorOf.get(folderOf(edge.to)) ?? 0) > (floorOf.get(folderOf(edge.from)) ?? 0))
      .map((edge) => `${edge.from} -> ${edge.to}${edge.typeOnly ? " (type)" : ""}`);
    expect(upward).toEqual([]);
  });

  it("the folders form no import cycle", () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it("sees an import that runs up a floor", () => {
    const level = (path: string) => floorOf.get(folderOf(path));
    expect(level("src/cli/main.ts")).toBeGreaterThan(level("src/runner/execution/executor.ts")!);
    expect(
      folderCycles([...edges, { from: "src/util/json.ts", to: "src/cli/main.ts", typeOnly: true }]),
    ).not.toEqual([]);
  });
});

describe("the runner's rooms", () => {
  it("nothing in runner/store or runner/replies enters a key: runner/keys reaches none of it", () => {
    const keys = edges.map((edge) => edge.from).filter((file) => file.startsWith("src/runner/keys/"));
    expect(keys.length).toBeGreaterThan(0);
    const reached = [...reachable(keys)].filter((file) => /^src\/runner\/(store|replies)\//.test(file));
    expect(reached).toEqual([]);
  });
});
