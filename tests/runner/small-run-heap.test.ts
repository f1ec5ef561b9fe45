// Once a command runs a stage, until a stage reports 10,000 items of work (src/load/small-run-heap.ts), V8's
// young generation is held at 4 MB per semi-space, and the heap is collected after each stage that ran.
// The young generation's cases are real Node processes that keep ~30 MB of small objects, made over many
// event-loop turns (as a build makes them), and report their new space's size from inside
// (v8.getHeapSpaceStatistics: both semi-spaces). Unheld, V8 grows it to 32 MB; held, it stays at 8.
import { execa } from "execa";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";
import { cleanedAfterEach, Project } from "../support/rig.js";

const MODULE = join(REPO, "dist/src/load/small-run-heap.js");
const PROGRAM = `
const v8 = require("node:v8");
const newSpaceMB = () =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size / 2 ** 20;
const kept = [];
// A timer turn, not setImmediate: however fast the machine, the hold's 2 ms watch gets to look.
const turn = () => new Promise((r) => setTimeout(r, 1));
async function keep(turns) {
  for (let t = 0; t < turns; t++) {
    for (let i = 0; i < 1000; i++) kept.push({ t, i, s: "x" + i });
    await turn();
  }
}
(async () => {
  const { sizeHeap } = require(process.env.MODULE);
  const hold = () => sizeHeap({ type: "stage-start", stage: "s", kind: "k", key: "" });
  const progress = (total) =>
    sizeHeap({ type: "progress", stage: "s", done: 0, total, retries: 0, errors: 0 });
  const when = process.env.HOLD;
  let atHold;
  if (when === "first") hold();
  if (when === "small run") (hold(), progress(9999));
  if (when === "large run") (hold(), progress(10000));
  if (when === "grown") {
    while (newSpaceMB() < 8) await keep(1);
    atHold = newSpaceMB();
    hold();
  }
  await keep(400);
  console.log(JSON.stringify({ atHold, mb: newSpaceMB() }));
})();`;

async function newSpace(hold: string, nodeArgs: string[] = [], nodeOptions = "") {
  const r = await execa("node", [...nodeArgs, "-e", PROGRAM], {
    env: { MODULE, HOLD: hold, NODE_OPTIONS: nodeOptions },
  });
  return JSON.parse(r.stdout) as { atHold?: number; mb: number };
}

describe("the young generation held", () => {
  it("grows to 32 MB unheld: the program below would show a hold that does nothing", async () => {
    expect((await newSpace("")).mb).toBeGreaterThan(8);
  });

  it("stays at 8 MB (two semi-spaces of 4) once held", async () => {
    expect((await newSpace("first")).mb).toBeLessThanOrEqual(8);
  });

  it("stays held through a stage of fewer than 10,000 items, and is released by one of 10,000", async () => {
    expect((await newSpace("small run")).mb).toBeLessThanOrEqual(8);
    expect((await newSpace("large run")).mb).toBeGreaterThan(8);
  });

  it("grows no further when held after it has grown to 8 MB or past", async () => {
    const { atHold, mb } = await newSpace("grown");
    expect(atHold).toBeGreaterThanOrEqual(8);
    expect(mb).toBe(atHold);
  });

  it("is left to the user's own flag, on the command line or in NODE_OPTIONS", async () => {
    expect((await newSpace("first", ["--max-semi-space-size=16"])).mb).toBeGreaterThan(8);
    expect((await newSpace("first", [], "--max-semi-space-size=16")).mb).toBeGreaterThan(8);
  });

  const { projects } = cleanedAfterEach();
  /** The new space's size as `medbench build` of the bundled voice-command sample ends, in MB. */
  async function afterBuild(nodeOptions: string): Promise<number> {
    const p = new Project();
    projects.push(p);
    p.write("new-space.cjs", REPORT_AT_EXIT);
    const r = await p.run(["build", "specs/voice-command.yaml", "--quiet"], {
      NODE_OPTIONS: `${nodeOptions} --require ${p.path("new-space.cjs")}`,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    return Number(/new space (\d+)/.exec(r.stderr)?.[1]);
  }

  it("is held by a build that runs stages (16 MB for the same build under the user's flag)", async () => {
    expect(await afterBuild("")).toBeLessThanOrEqual(8);
    expect(await afterBuild("--max-semi-space-size=16")).toBeGreaterThan(8);
  });
});

// At exit, objects that survive scavenges (as a large run's would): V8 grows the young generation then
// unless its growth is held, so the size reported does not hang on how much the sample build allocated.
const REPORT_AT_EXIT = `process.on("exit", () => {
  const kept = [];
  for (let i = 0; i < 2e6; i++) kept.push({ i });
  process.stderr.write("new space " + require("node:v8").getHeapSpaceStatistics()
    .find((s) => s.space_name === "new_space").space_size / 2 ** 20 + " " + kept.length + "\\n");
});
`;

// After each stage that ran, in a small run, a full collection: the stage's promoted rows are garbage by
// then. The program keeps ~30 MB of small objects over many turns (promoted to the old generation), lets
// them go, and reports the heap's used size just before and just after the stage-done event: nothing
// allocates in between, so only a collection the event makes can lower it.
const GARBAGE = `
const v8 = require("node:v8");
const usedMB = () => v8.getHeapStatistics().used_heap_size / 2 ** 20;
(async () => {
  const { sizeHeap } = require(process.env.MODULE);
  const { HOLD, STATUS, PER_TURN, STAGES } = process.env;
  if (STAGES) sizeHeap({ type: "build-start", spec: "s.yaml", specHash: "", stages: Number(STAGES) });
  if (HOLD !== "never") sizeHeap({ type: "stage-start", stage: "s", kind: "k", key: "" });
  if (HOLD === "large run")
    sizeHeap({ type: "progress", stage: "s", done: 0, total: 10000, retries: 0, errors: 0 });
  let rows = [];
  for (let t = 0; t < 50; t++) {
    for (let i = 0; i < Number(PER_TURN ?? 10000); i++) rows.push({ t, i, s: "x" + i });
    await new Promise((r) => setTimeout(r, 1));
  }
  rows = null;
  const before = usedMB();
  sizeHeap({ type: "stage-done", stage: "s", kind: "k", key: "", status: STATUS, ms: 0 });
  const now = usedMB(); // the collection comes in the next turn, not within the event
  await new Promise((r) => setImmediate(r));
  console.log(JSON.stringify({ before, now, after: usedMB() }));
})();`;

async function aroundStageDone(
  hold: string,
  status: string,
  nodeOptions = "",
  nodeArgs: string[] = [],
  stages = "",
) {
  const r = await execa("node", [...nodeArgs, "-e", GARBAGE], {
    env: { MODULE, HOLD: hold, STATUS: status, NODE_OPTIONS: nodeOptions, STAGES: stages },
  });
  return JSON.parse(r.stdout) as { before: number; now: number; after: number };
}

describe("a small run's garbage collected after each stage", () => {
  it("is collected when a stage that ran is done, under the user's semi-space flag too", async () => {
    for (const nodeOptions of ["", "--max-semi-space-size=16"]) {
      const { before, now, after } = await aroundStageDone("first", "ran", nodeOptions);
      expect(before, nodeOptions).toBeGreaterThan(25);
      expect(now, nodeOptions).toBeGreaterThan(before - 5);
      expect(after, nodeOptions).toBeLessThan(before - 20);
    }
  });

  it("is collected after a build's stage that another follows, not after its last", async () => {
    const { before, after } = await aroundStageDone("first", "ran", "", [], "2");
    expect(after).toBeLessThan(before - 20);
    const last = await aroundStageDone("first", "ran", "", [], "1");
    expect(last.before).toBeGreaterThan(25);
    expect(last.after).toBeGreaterThan(last.before - 5);
  });

  it("is left to V8 after a fresh stage, in a large run, and before any stage", async () => {
    for (const [hold, status] of [
      ["first", "fresh"],
      ["large run", "ran"],
      ["never", "ran"],
    ]) {
      const { before, after } = await aroundStageDone(hold!, status!);
      expect(before, `${hold} ${status}`).toBeGreaterThan(25);
      expect(after, `${hold} ${status}`).toBeGreaterThan(before - 5);
    }
  });

  // A user's own gc (node --expose-gc) is the one medbench calls: here a counter.
  const COUNT_COLLECTIONS = `let n = 0;
globalThis.gc = () => n++;
process.on("exit", () => process.stderr.write("collections " + n + "\\n"));
`;
  const collections = async (perTurn: number) => {
    const r = await execa("node", ["-e", COUNT_COLLECTIONS + GARBAGE], {
      env: { MODULE, HOLD: "first", STATUS: "ran", PER_TURN: String(perTurn) },
    });
    return Number(/collections (\d+)/.exec(r.stderr)?.[1]);
  };

  it("is left to V8 after a stage that left under 1 MB (one run in its own process)", async () => {
    // One as the first stage starts (what the start-up left), then one after the stage if it left garbage.
    expect(await collections(10000)).toBe(2); // ~30 MB kept over the stage: collected once after it
    expect(await collections(100)).toBe(1); // ~0.3 MB
  });

  it("is left to V8, and the build goes on, when Node names gc otherwise (--expose-gc-as)", async () => {
    const { before, after } = await aroundStageDone("first", "ran", "", ["--expose-gc-as=collect"]);
    expect(after).toBeGreaterThan(before - 5);
  });

  const { projects } = cleanedAfterEach();
  it("a build collects once at most per stage run, none after its last or when all are fresh", async () => {
    const p = new Project();
    projects.push(p);
    p.write("count.cjs", COUNT_COLLECTIONS);
    const build = async (...extra: string[]) => {
      const r = await p.run(["build", "specs/voice-command.yaml", "--json", ...extra], {
        NODE_OPTIONS: `--require ${p.path("count.cjs")}`,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const ran = r.stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { type: string; status?: string })
        .filter((e) => e.type === "stage-done" && e.status === "ran").length;
      return { ran, collections: Number(/collections (\d+)/.exec(r.stderr)?.[1]) };
    };
    const first = await build();
    expect(first.ran).toBeGreaterThanOrEqual(5);
    expect(first.collections).toBeLessThan(first.ran); // the last stage, the bootstrap, ran
    expect(await build("--rekey")).toEqual({ ran: 0, collections: 0 });
  });
});

// A collection leaves the old generation's pages held until the next one (its sweeping is not done yet):
// the program keeps one row in 40 of ~30 MB over a stage, so that every page still holds some; after the
// stage's collection the pages stay held. A stage after it that left nothing is followed by a collection
// when more than 4 MB of them are held unused, which lets them go.
const IDLE_PAGES = `
const v8 = require("node:v8");
const old = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "old_space");
const idleMB = () => (old().space_size - old().space_used_size) / 2 ** 20;
(async () => {
  const { sizeHeap } = require(process.env.MODULE);
  const stage = (type) => sizeHeap({ type, stage: "s", kind: "k", key: "", status: "ran", ms: 0 });
  stage("stage-start");
  let rows = [];
  for (let t = 0; t < 50; t++) {
    for (let i = 0; i < 10000; i++) rows.push({ t, i, s: "x" + i });
    await new Promise((r) => setTimeout(r, 1));
  }
  const kept = rows.filter((_, i) => i % 40 === 0);
  rows = null;
  const turn = () => new Promise((r) => setImmediate(r)); // the collection after a stage comes in it
  stage("stage-done");
  await turn();
  const afterStage = idleMB();
  stage("stage-start");
  stage("stage-done");
  await turn();
  console.log(JSON.stringify({ afterStage, afterNext: idleMB(), kept: kept.length }));
})();`;

// The collection after a stage comes once the next has started (a turn later): what it frees was the stage
// before's, so the running stage's measure of what it leaves starts that much lower. The first stage leaves
// ~30 MB, the second ~9: the second's is collected too (measured from its start, before the first's
// collection, it would have left nothing).
const BEHIND_NEXT = `
const v8 = require("node:v8");
const usedMB = () => v8.getHeapStatistics().used_heap_size / 2 ** 20;
const turn = () => new Promise((r) => setImmediate(r));
async function leave(perTurn) {
  let rows = [];
  for (let t = 0; t < 50; t++) {
    for (let i = 0; i < perTurn; i++) rows.push({ t, i, s: "x" + i });
    await new Promise((r) => setTimeout(r, 1));
  }
  rows = null;
}
(async () => {
  const { sizeHeap } = require(process.env.MODULE);
  const stage = (type) => sizeHeap({ type, stage: "s", kind: "k", key: "", status: "ran", ms: 0 });
  sizeHeap({ type: "build-start", spec: "s.yaml", specHash: "", stages: 3 });
  stage("stage-start");
  await leave(10000);
  stage("stage-done");
  stage("stage-start");
  await turn();
  await leave(3000);
  const before = usedMB();
  stage("stage-done");
  await turn();
  console.log(JSON.stringify({ before, after: usedMB() }));
})();`;

describe("the collection behind the next stage", () => {
  it("leaves the next stage's garbage measured from after it", async () => {
    const r = await execa("node", ["-e", BEHIND_NEXT], { env: { MODULE } });
    const { before, after } = JSON.parse(r.stdout) as { before: number; after: number };
    expect(before).toBeGreaterThan(8);
    expect(after).toBeLessThan(before - 5);
  });
});

describe("the old generation's pages held after a collection", () => {
  it("are let go after the next stage that ran, when more than 4 MB are held unused", async () => {
    const r = await execa("node", ["-e", IDLE_PAGES], { env: { MODULE } });
    const { afterStage, afterNext } = JSON.parse(r.stdout) as { afterStage: number; afterNext: number };
    expect(afterStage).toBeGreaterThan(20);
    expect(afterNext).toBeLessThan(4);
  });
});

// A small run's code is optimised later: the program counts the calls a function made after the event takes
// before V8 optimises it (natives syntax; optimisation on the main thread, so the count is not a race).
const OPTIMISED_AFTER = `
const { sizeHeap } = require(process.env.MODULE);
if (process.env.HOLD !== "never") sizeHeap({ type: "stage-start", stage: "s", kind: "k", key: "" });
if (process.env.HOLD === "large run")
  sizeHeap({ type: "progress", stage: "s", done: 0, total: 10000, retries: 0, errors: 0 });
if (process.env.HOLD === "sending")
  sizeHeap({ type: "progress", stage: "s", done: 0, total: 2070, retries: 0, errors: 0, sending: true });
if (process.env.HOLD === "progress")
  sizeHeap({ type: "progress", stage: "s", done: 1, total: 2070, retries: 0, errors: 0 });
const work = new Function("n", "let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s;");
let calls = 0;
while (calls < 100000 && !(%GetOptimizationStatus(work) & 16)) (work(100), calls++);
console.log(calls);`;

async function callsBeforeOptimised(hold: string, ...userFlags: string[]): Promise<number> {
  const flags = ["--allow-natives-syntax", "--no-concurrent-recompilation", ...userFlags];
  const r = await execa("node", [...flags, "-e", OPTIMISED_AFTER], { env: { MODULE, HOLD: hold } });
  return Number(r.stdout);
}

describe("a small run's optimisation budget", () => {
  it("is raised once a stage starts, and V8's own again in a large run", async () => {
    const own = await callsBeforeOptimised("never");
    expect(own).toBeGreaterThan(0);
    expect(own).toBeLessThan(100000);
    expect(await callsBeforeOptimised("first")).toBeGreaterThan(3 * own);
    expect(await callsBeforeOptimised("large run")).toBeLessThan(2 * own);
  });

  it("is V8's own again once a stage sends its first request, not at its progress alone", async () => {
    const own = await callsBeforeOptimised("never");
    expect(await callsBeforeOptimised("sending")).toBeLessThan(2 * own);
    expect(await callsBeforeOptimised("progress")).toBeGreaterThan(3 * own);
  });

  it("is left at the user's own, set on Node's command line", async () => {
    const own = await callsBeforeOptimised("never");
    expect(await callsBeforeOptimised("first", "--interrupt_budget=67584")).toBeLessThan(2 * own);
  });
});

// V8's optimising compiler stays on through a build: held off until the bootstrap, it saved 2.5 to 3 MB of
// the first build's peak but cost 7 to 16 % of its wall time (the model stage's client ran unoptimised:
// docs/performance.md, "Peak memory of a first build"). A preload follows every flag medbench sets.
const COMPILER_FLAGS = `const v8 = require("node:v8");
const set = v8.setFlagsFromString;
const seen = [];
v8.setFlagsFromString = (flags) => {
  if (/turbofan|opt\b/.test(flags)) seen.push(flags);
  return set.call(v8, flags);
};
process.on("exit", () => process.stderr.write("compiler flags [" + seen.join(" ") + "]\\n"));
`;

describe("V8's optimising compiler in a build", () => {
  const { projects } = cleanedAfterEach();
  it("is never turned off", async () => {
    const p = new Project();
    projects.push(p);
    p.write("compiler.cjs", COMPILER_FLAGS);
    const r = await p.run(["build", "specs/voice-command.yaml"], {
      NODE_OPTIONS: `--require ${p.path("compiler.cjs")}`,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(/compiler flags \[(.*)\]/.exec(r.stderr)?.[1]).toBe("");
  });
});
