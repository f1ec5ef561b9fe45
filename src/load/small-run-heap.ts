// A small run's peak memory is mostly V8's own room to grow, not what the run keeps alive
// (docs/performance.md, "Where it stands, and why"). Two parts of it are held once a command has stages to
// run, until a stage reports 10,000 items of work or more (beside such a run they are small, and held they
// cost CPU):
// - The young generation. V8 lets it grow to 16 MB per semi-space under a build's allocation (a 2,070-item
//   build peaked near 140 MB; held at 4 MB, near 103, and no slower). The flag for it,
//   --max-semi-space-size, is read only as Node starts, and any such flag costs every command, a no-op too,
//   about 15 ms of start-up (Node then refuses its built-in code cache). The growth factor, read at each
//   growth, can be set as the process runs: the young generation grows to 4 MB per semi-space at most.
// - The old generation's garbage. A stage's rows outlive a few young collections, so they are promoted, and
//   are garbage once the stage is done; V8 lets the old generation grow to a few times what survived its
//   last full collection before it collects again, so a small run's stages piled up their dead rows (a
//   2,070-item run made one full collection in its last 1.7 s). A full collection after each stage that ran
//   keeps the pile to one stage's: that run's peak went from 101-104 MB to 87-88, for about 3 % more CPU.
//   Only after a stage that left more than 1 MB: one whose work ran in a process of its own (task code,
//   isolated) leaves 0.4 to 0.7 MB here, and its collection (9 to 100 ms under load, by --trace-gc) freed
//   nothing that mattered. (At 4 MB the parse stage's 2.6 MB went uncollected too: 0.94 of the CPU, but 8 MB
//   more peak RSS; at 1 MB 0.98 and 1 MB: docs/performance.md, "Task code isolated".) Never after a build's
//   last stage: nothing of the build is left to run in the room it would make. It runs as the next stage
//   has started (collectBehindNextStage).
// While the young generation is held, V8 also optimises code later than its default (SMALL_RUN_BUDGET),
// until a stage sends its first request over the network.
// A user's own semi-space flag leaves the young generation to them; the collections go on (they ask nothing
// of the young generation, and such a user wants less memory).
import type { BuildEvent } from "../contract/events.js";
import { holdFlag, releaseFlag, v8 } from "./held-flags.js";

const HELD_SEMI_SPACE = 4 * 2 ** 20;
const LARGE_RUN = 10_000;
/** A stage that left more than this in the heap is followed by a collection (bytes). */
const LEFT_GARBAGE = 2 ** 20;
/** Pages of the old generation held but not used after a stage that ran, above which it is collected too
 *  (bytes): a collection frees the pages of the one before it once its sweeping is done. After a first
 *  build's model stage 7 MB stay held until the next collection; without one, they were still held under
 *  the bootstrap's peak (docs/performance.md, "Peak memory of a first build"). */
const IDLE_OLD = 4 * 2 ** 20;
let youngHeld = false;
let stopWatching = () => {};
// From the first stage until one reports LARGE_RUN items of work (a model or a download stage; a build whose
// stages that run report no progress, such as --refresh bootstrap, stays small: its collections then cost in
// proportion to its heap, as its stages' own work does).
let small: boolean | undefined;
/** The heap in use as the running stage started (bytes). */
let usedAtStart = 0;
/** The build's stages not yet done (its build-start event names them all; unknown without one). */
let stagesLeft: number | undefined;

/** What a build's events say of the heap: the young generation held from the first stage, a collection
 *  after each stage that ran and left garbage (but the build's last), both until a stage's progress counts
 *  LARGE_RUN items or more. */
export function sizeHeap(e: BuildEvent): void {
  if (e.type === "build-start") stagesLeft = e.stages;
  else if (e.type === "stage-done" && stagesLeft !== undefined) stagesLeft--;
  if (e.type === "stage-start" && small === undefined) {
    small = true;
    holdBeforeWork();
    // What the start-up left is garbage, and V8 sets its next full collection's limit from what one leaves
    // live: without this, how soon the first came hung on how much the start-up allocated. A first build
    // that read its code memo from medbench's build (src/hash/code-memo.ts) allocated too little for one,
    // so its first came in the model stage, its requests live, and the old generation grew to 27 MB before
    // the collection after the stage (peak RSS 90 against 74 MB; docs/performance.md). In the next turn:
    // off the critical path when the first stage waits (on a process of its own, or its reads), before
    // the model stage either way.
    setImmediate(collectGarbage).unref();
  }
  if (!small) return;
  if (e.type === "stage-start") usedAtStart = usedHeap();
  else if (e.type === "progress" && e.total >= LARGE_RUN) {
    small = false;
    if (youngHeld) releaseYoungGeneration();
  } else if (e.type === "progress" && e.sending) releaseFlag("interrupt-budget");
  else if (e.type === "stage-done" && e.status === "ran" && stagesLeft !== 0 && worthCollecting())
    setImmediate(collectBehindNextStage);
}

/** The collection after a stage, in the event loop's next turn: by then the next stage has started, and
 *  when it runs in a process of its own (parse and score after a model stage), medbench's process only
 *  waits for it, so the collection is off the build's critical path (a rerun's wall time 0.96). What it
 *  frees was the stage before's: the running stage's measure of what it leaves starts that much lower
 *  (counted from after it, parse and score left too little to be collected, and a first build's end grew
 *  by 3 MB: docs/performance.md, "Peak memory of a first build"). */
function collectBehindNextStage(): void {
  const before = usedHeap();
  collectGarbage();
  usedAtStart -= before - usedHeap();
}

/** A stage left garbage, or the pages of an earlier collection are still held (a collection lets go of the
 *  pages the one before it emptied, once that one's sweeping is done). */
const worthCollecting = () => leftGarbage() || oldSpaceIdle() > IDLE_OLD;

/** Runs `load` (modules loaded ahead while a stage runs in a process of its own, src/load/ahead.ts): what
 *  it adds to the heap is code kept, not the stage's garbage, so it calls for no collection after it. */
export function loadNotLeft(load: () => void): void {
  const before = usedHeap();
  try {
    load();
  } finally {
    usedAtStart += usedHeap() - before;
  }
}

/** The young generation held before a command's first heavy work that is not a stage's: checking a task's
 *  sources on a cold code memo loads the TypeScript compiler, which would grow it to 16 MB before any stage
 *  started. */
export function holdBeforeWork(): void {
  if (!youngHeld && !userSized()) holdYoungGeneration();
}

/** The young generation grows no further (a growth factor of 1; V8's own is 2). */
const stopGrowth = () => holdFlag("semi-space-growth-factor", 1);
const semiSpace = () =>
  (v8()
    .getHeapSpaceStatistics()
    .find((space) => space.space_name === "new_space")?.space_size ?? 0) / 2;
const usedHeap = () => v8().getHeapStatistics().used_heap_size;
const leftGarbage = () => usedHeap() - usedAtStart > LEFT_GARBAGE;
const oldSpaceIdle = () => {
  const old = v8()
    .getHeapSpaceStatistics()
    .find((space) => space.space_name === "old_space");
  return old ? old.space_size - old.space_used_size : 0;
};
const userSized = () =>
  /semi[-_]space/.test(`${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`);

/** A small run's code is optimised later than V8's default budget (67,584): a 2,070-item build ran much of
 *  its code through V8's optimising compiler for little run left (CPU, 4 interleaved pairs at a load of 2 to
 *  7: first build 0.96 to 0.99, rebuild 0.90 to 0.91 at 400,000; 150,000 0.99 / 0.94, 1 M 1.01 / 0.93, 2.2 M
 *  1.02 / 0.96). Held as the young generation's flag is (./held-flags.ts), until a stage sends its first
 *  request: its per-request code is then the build's bottleneck (the main thread busy 90 % of a model
 *  stage), and V8's compile jobs run on the core the sending leaves half idle (docs/performance.md, "The
 *  model stage's send path, run cold"). */
const SMALL_RUN_BUDGET = 400_000;

function holdYoungGeneration(): void {
  youngHeld = true;
  holdFlag("interrupt-budget", SMALL_RUN_BUDGET);
  // V8 doubles it at each growth, each one after as many bytes have survived as it holds: left at its own
  // pace until 4 MB, looked at every 2 ms, then growth stops (a factor of 1). A long synchronous stretch can
  // let one more growth through between two looks; that costs memory, never a result.
  if (semiSpace() >= HELD_SEMI_SPACE) return stopGrowth();
  const watch = setInterval(() => {
    if (semiSpace() < HELD_SEMI_SPACE) return;
    stopGrowth();
    clearInterval(watch);
  }, 2);
  watch.unref();
  stopWatching = () => clearInterval(watch);
}

// Node gives `gc` only under --expose-gc. Set as the process runs, the flag gives it to new contexts. Under
// --expose-gc-as it has another name: then no collection (a memory saving must never fail a build).
let gc: (() => void) | null | undefined;
function collectGarbage(): void {
  if (gc === undefined) {
    const own = (globalThis as { gc?: unknown }).gc;
    if (typeof own === "function") gc = own as () => void;
    else {
      const vm = require("node:vm") as typeof import("node:vm");
      v8().setFlagsFromString("--expose-gc");
      const found: unknown = vm.runInNewContext("typeof gc === 'function' ? gc : null");
      v8().setFlagsFromString("--no-expose-gc");
      gc = typeof found === "function" ? (found as () => void) : null;
    }
  }
  // One collection: the pages it empties are let go at the next stage's (IDLE_OLD), not by a second one at
  // once, which cost a full collection after each stage for the same peak (docs/performance.md, "Peak
  // memory of a first build").
  gc?.();
}

function releaseYoungGeneration(): void {
  youngHeld = false;
  stopWatching();
  releaseFlag("semi-space-growth-factor");
  releaseFlag("interrupt-budget");
}
