// Task code called item by item (parseReply) runs in runs under one watchdog of the deadline, each call
// still held to the deadline alone: a call that started late in a run and is cut off there is made again by
// itself. The compiled guard, as the CLI loads it. The calls wait on the clock, so the machine's speed does
// not matter; each call takes a sixth of the deadline, so scheduling delays of seconds do not either.
import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { eachUnderDeadline as Each } from "../../src/runner/code/task-guard.js";
import { REPO } from "../support/helpers.js";

const { eachUnderDeadline } = createRequire(import.meta.url)(
  join(REPO, "dist/src/runner/code/task-guard.js"),
) as { eachUnderDeadline: typeof Each };

const waitMs = (ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end; );
};

describe("calls of task code in runs under the deadline", () => {
  it("gives each call's result, in order", () => {
    const args = Array.from({ length: 1000 }, (_, i) => i);
    expect(eachUnderDeadline("f()", 60, (x: number) => x * 2, args)).toEqual(args.map((x) => x * 2));
  });

  it("a run past the deadline is not a failure when each of its calls is within it", () => {
    const calls: number[] = [];
    const slow = (x: number) => {
      calls.push(x);
      waitMs(1000);
      return x;
    };
    // Ten calls of 1 s under a 6 s deadline: the run passes it, each call is 5 s inside it (room for a
    // loaded machine's scheduling delays).
    const args = Array.from({ length: 10 }, (_, i) => i);
    expect(eachUnderDeadline("f()", 6, slow, args)).toEqual(args);
    expect(calls.length).toBeGreaterThan(10); // the call cut off with its run was made again
  });

  it("a call that does not end is refused, naming it and the deadline", () => {
    const endless = (x: number) => {
      if (x === 2) for (;;);
      return x;
    };
    expect(() => eachUnderDeadline("tasks/t1/parser.ts: parseReply()", 1, endless, [0, 1, 2, 3])).toThrow(
      /tasks\/t1\/parser\.ts: parseReply\(\) did not finish within 1 s/,
    );
  });
});
