// The product code's folders stand on floors, and the runner's folder is in rooms, each in an order from
// the bottom up (scripts/structure/floors.json): an import, of a value or of a type, runs down a floor (or a
// room) or stays on its own, never up; so the folders, and the rooms, form no cycle either.
import { describe, expect, it } from "vitest";
import {
  folderCycles,
  folderOf,
  measure,
  readStructure,
  roomCycles,
  roomOf,
  unplaced,
  upward,
  type ImportEdge,
} from "../../scripts/structure/measure.mjs";
import { REPO } from "../support/helpers.js";

const structure = readStructure(REPO);
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
    expect(unplaced(edges, folderOf, structure.floors)).toEqual([]);
  });

  it("no import, of a value or a type, runs up a floor", () => {
    expect(upward(edges, folderOf, structure.floors)).toEqual([]);
  });

  it("the folders form no import cycle", () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it("sees an import that runs up a floor", () => {
    const up = { from: "src/util/json.ts", to: "src/cli/main.ts", typeOnly: true };
    expect(upward([...edges, up], folderOf, structure.floors)).toEqual([
      "src/util/json.ts -> src/cli/main.ts (type)",
    ]);
    expect(folderCycles([...edges, up])).not.toEqual([]);
  });
});

describe("the runner's rooms", () => {
  it("every folder of src/runner is a room of floors.json, and no file lies outside a room", () => {
    expect(unplaced(edges, roomOf, structure.rooms)).toEqual([]);
  });

  it("no import, of a value or a type, runs up a room", () => {
    expect(upward(edges, roomOf, structure.rooms)).toEqual([]);
  });

  it("the rooms form no import cycle", () => {
    expect(roomCycles(edges)).toEqual([]);
  });

  it("sees a room cycle, an import up a room and a file in no room", () => {
    const back = { from: "src/runner/store/cache.ts", to: "src/runner/execution/walk.ts", typeOnly: true };
    const cycles = roomCycles([...edges, back]);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toEqual(expect.arrayContaining(["src/runner/execution", "src/runner/store"]));
    expect(upward([...edges, back], roomOf, structure.rooms)).toEqual([
      "src/runner/store/cache.ts -> src/runner/execution/walk.ts (type)",
    ]);
    const loose = { from: "src/runner/loose.ts", to: "src/runner/keys/keys.ts", typeOnly: false };
    expect(unplaced([...edges, loose], roomOf, structure.rooms)).toEqual(["src/runner"]);
  });

  it("nothing in runner/store or runner/replies enters a key: runner/keys reaches none of it", () => {
    const keys = edges.map((edge) => edge.from).filter((file) => file.startsWith("src/runner/keys/"));
    expect(keys.length).toBeGreaterThan(0);
    const reached = [...reachable(keys)].filter((file) => /^src\/runner\/(store|replies)\//.test(file));
    expect(reached).toEqual([]);
  });
});
