// Task code runs under a deadline (MEDBENCH_TASK_DEADLINE, src/runner/code/task-guard.ts): an endless loop
// at a task module's top level or in one of its functions ends the build or the verify with a clear refusal
// instead of hanging it, and a task that calls process.exit is a failed build, never exit 0 without results.
// A timer task code leaves running does not hold the build either: the stage's process is ended once it
// gives its outputs (src/runner/code/isolation.ts).
// The deadline set here is small, and nothing depends on how fast the machine is: the loops never end.
import { mkdirSync } from "node:fs";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanFailure, Project, userTaskProject } from "../support/rig.js";

const SCORER = "tasks/t1/scorer.ts";
const SHORT = { MEDBENCH_TASK_DEADLINE: "1" };
const WRITTEN = ["cache/objects", "cache/stages", "medbench.lock", "results"];

describe("task code under a deadline", () => {
  let p: Project;
  beforeAll(async () => {
    p = await userTaskProject();
  });
  afterAll(() => p.remove());

  /** The build with the scorer edited (then restored): its exit code and stderr, with nothing written. */
  async function buildWith(edit: (t: string) => string, env: Record<string, string> = SHORT) {
    const pristine = p.read(SCORER);
    p.write(SCORER, edit(pristine));
    const before = p.snapshot(WRITTEN);
    try {
      const r = await p.run(["build", "specs/t1.yaml"], env);
      expectCleanFailure(r.stderr);
      expect(p.snapshot(WRITTEN)).toBe(before);
      return r;
    } finally {
      p.write(SCORER, pristine);
    }
  }

  it("an endless loop at a module's top level is refused, with progress shown first", async () => {
    const r = await buildWith((t) => `${t}\nfor (;;) {}\n`);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/loading task t1 \(tasks\/t1\/\)…/);
    expect(r.stderr.indexOf("loading task t1")).toBeLessThan(r.stderr.indexOf("error:"));
    expect(r.stderr).toMatch(/tasks\/t1\/index\.ts: loading the task's modules did not finish within 1 s/);
    expect(r.stderr).toMatch(/MEDBENCH_TASK_DEADLINE=SECONDS/);
  });

  it("an endless loop in score() fails the build after the deadline", async () => {
    const r = await buildWith((t) =>
      t.replace("const items = requests.map(", "for (;;) {}\n  const items = requests.map("),
    );
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/stage score: tasks\/t1\/scorer\.ts: score\(\) did not finish within 1 s/);
  });

  it("process.exit(0) in score() is refused where it is written, before anything runs", async () => {
    const r = await buildWith(
      (t) => t.replace("const items = requests.map(", "process.exit(0);\n  const items = requests.map("),
      {},
    );
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/tasks\/t1\/scorer\.ts:\d+:\d+: uses `process`/);
  });

  it("process.exit(0) reached past the source rules is still a failed build", async () => {
    // The rules read the source; a name built at run time is beyond them, and the guard catches the exit.
    const exit = 'const host = globalThis as Record<string, any>;\n  host["pro" + "cess"].exit(0);\n';
    const r = await buildWith(
      (t) => t.replace("const items = requests.map(", `${exit}  const items = requests.map(`),
      {},
    );
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /tasks\/t1\/scorer\.ts: score\(\) called process\.exit\(0\): task code may not end/,
    );
  });

  it("a timer left running holds nothing: score's process ends once it gives its outputs", async () => {
    const pristine = p.read(SCORER);
    const timer = "setInterval(() => undefined, 1000);\n  const items = requests.map(";
    p.write(SCORER, pristine.replace("const items = requests.map(", timer));
    try {
      const r = await p.run(["build", "specs/t1.yaml"]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/done +score/);
    } finally {
      p.write(SCORER, pristine);
    }
  });

  it("a deadline that is no number of seconds is refused", async () => {
    for (const value of ["soon", "0", "-5"]) {
      const r = await p.run(["build", "specs/t1.yaml"], { MEDBENCH_TASK_DEADLINE: value });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`MEDBENCH_TASK_DEADLINE=${value} is no deadline`);
    }
  });

  it("verify --run-task-code of a bundle whose task loops forever ends with a refusal", async () => {
    const ex = await p.run(["export", "results/t1/medbench_reference", "-o", "t1.tar.gz"]);
    expect(ex.exitCode, ex.stderr).toBe(0);
    mkdirSync(p.path("unpacked"));
    await execa("tar", ["xzf", p.path("t1.tar.gz"), "-C", p.path("unpacked")]);
    p.edit("unpacked/spec/tasks/t1/scorer.ts", (t) => `${t}\nfor (;;) {}\n`);
    const r = await p.run(["verify", "unpacked", "--run-task-code"], SHORT);
    expect(r.exitCode, r.stdout + r.stderr).not.toBe(0);
    expectCleanFailure(r.stderr);
    expect(r.stderr).toMatch(/loading the task's modules did not finish within 1 s/);
  });
});
