// What a user's task returns is checked against the contract before anything is written: a task author's
// bug (a NaN, a proportion of 5, two requests of one id, no metric, an unknown contract version) is refused,
// naming the task's file and function, and never becomes a published number (src/contract/returns.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanFailure, Project, userTaskProject } from "../support/rig.js";

/** A bad return: the file edited, the edit, the exit code and the message expected. */
interface Case {
  name: string;
  file: string;
  from: string | RegExp;
  to: string;
  code: number;
  message: RegExp;
}

const SCORER = "tasks/t1/scorer.ts";
const PROMPTS = "tasks/t1/prompts.ts";
const ROW_VALUE = "value: it.verdicts.correct ? 1 : 0";

const CASES: Case[] = [
  {
    name: "a row value NaN",
    file: SCORER,
    from: ROW_VALUE,
    to: "value: NaN",
    code: 1,
    message: /tasks\/t1\/scorer\.ts: score\(\) metric accuracy, row "q1": value NaN is not a finite number/,
  },
  {
    name: "a row value Infinity",
    file: SCORER,
    from: ROW_VALUE,
    to: "value: Infinity",
    code: 1,
    message: /score\(\) metric accuracy, row "q1": value Infinity is not a finite number/,
  },
  {
    name: "a proportion of 5",
    file: SCORER,
    from: ROW_VALUE,
    to: "value: 5",
    code: 1,
    message: /score\(\) metric accuracy, row "q1": value 5 is outside \[0, 1\], the range of a proportion/,
  },
  {
    name: "an unknown unit",
    file: SCORER,
    from: 'unit: "proportion"',
    to: 'unit: "percent" as "score"',
    code: 1,
    message: /score\(\) metric accuracy has the unit "percent" \(use proportion or score\)/,
  },
  {
    name: "metrics: []",
    file: SCORER,
    from: /metrics: \[\{[^\n]*\],/,
    to: "metrics: [],",
    code: 1,
    message: /tasks\/t1\/scorer\.ts: score\(\) returned metrics \[\]: a run needs at least one metric/,
  },
  {
    name: "metrics: undefined",
    file: SCORER,
    from: /metrics: \[\{[^\n]*\],/,
    to: "metrics: undefined as never,",
    code: 1,
    message: /score\(\) returned metrics undefined: a run needs at least one metric/,
  },
  {
    name: "the spec's primary metric absent",
    file: SCORER,
    from: 'name: "accuracy"',
    to: 'name: "correct"',
    code: 1,
    message: /score\(\) returned no metric accuracy, the spec's primary_metric \(its metrics: correct\)/,
  },
  {
    name: "two requests of one id",
    file: PROMPTS,
    from: "id: it.id,",
    to: 'id: "same",',
    code: 1,
    message: /tasks\/t1\/prompts\.ts: buildRequests\(\) the id "same" is given to two requests/,
  },
  {
    name: "no request",
    file: PROMPTS,
    from: ".filter((l) => l.trim())",
    to: ".filter(() => false)",
    code: 1,
    message: /tasks\/t1\/prompts\.ts: buildRequests\(\) returned no request/,
  },
  {
    name: "contract: 99",
    file: "tasks/t1/index.ts",
    from: "contract: 2,",
    to: "contract: 99 as 2,",
    code: 2,
    message:
      /tasks\/t1\/index\.ts:\d+:3: the task says `contract: 99`, a version this medbench does not know/,
  },
];

describe("a user's task's returns, checked against the contract", () => {
  let p: Project;
  beforeAll(async () => {
    p = await userTaskProject();
  });
  afterAll(() => p.remove());

  it.each(CASES)("$name is refused, naming the file and function; nothing is written", async (c) => {
    const pristine = p.read(c.file);
    const edited = pristine.replace(c.from, c.to);
    expect(edited, "the edit applies").not.toBe(pristine);
    p.write(c.file, edited);
    // What a build writes: the stored outputs and stage entries, the lock, the results.
    const written = ["cache/objects", "cache/stages", "medbench.lock", "results"];
    const before = p.snapshot(written);
    try {
      const r = await p.run(["build", "specs/t1.yaml"]);
      expect(r.exitCode, r.stderr).toBe(c.code);
      expect(r.stderr).toMatch(c.message);
      expectCleanFailure(r.stderr);
      expect(p.snapshot(written)).toBe(before);
    } finally {
      p.write(c.file, pristine);
    }
  });
});
