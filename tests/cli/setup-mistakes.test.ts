// Setting up a repository and a task of one's own: what the file system refuses and what a task author gets
// wrong is a clean refusal (exit 2, what and where, a fix), never a stack trace. The tests run as root,
// which no permission bit stops: a folder of sysfs (/sys/kernel) refuses a new file to root as to anyone
// (EACCES).
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCleanFailure, Project, userTaskProject } from "../support/rig.js";

describe("init and new-task where the file system refuses", () => {
  it.runIf(existsSync("/sys/kernel"))("init where .gitignore cannot be written", async () => {
    const p = new Project(false);
    try {
      const r = await p.run(["init", "--project", "/sys/kernel"]);
      expect(r.exitCode, r.stderr).toBe(2);
      expectCleanFailure(r.stderr);
      expect(r.stderr).toMatch(/cannot write \/sys\/kernel\/\.gitignore \((EACCES|EPERM|EROFS): /);
      expect(r.stderr).toMatch(/fix: run it in a folder this user can write/);
    } finally {
      p.remove();
    }
  });

  it("new-task with a 300-character name, or into a folder of a 300-character name", async () => {
    const p = new Project(false);
    try {
      expect((await p.run(["init"])).exitCode).toBe(0);
      const long = "a".repeat(300);
      const named = await p.run(["new-task", long]);
      expect(named.exitCode, named.stderr).toBe(2);
      expectCleanFailure(named.stderr);
      expect(named.stderr).toMatch(/at most 64 of them \(it has 300\)/);
      mkdirSync(p.path("deep"));
      const inside = await p.run(["new-task", "t1", "--project", `deep/${"b".repeat(300)}`]);
      expect(inside.exitCode, inside.stderr).toBe(2);
      expectCleanFailure(inside.stderr);
      expect(inside.stderr).toMatch(/ENAMETOOLONG/);
      expect(p.exists("specs/t1.yaml")).toBe(false);
    } finally {
      p.remove();
    }
  });
});

describe("a task that cannot load", () => {
  let p: Project;
  beforeAll(async () => {
    p = await userTaskProject();
  });
  afterAll(() => p.remove());

  /** The build, refused cleanly with exit 2 and nothing written; its stderr. */
  async function refused(): Promise<string> {
    const written = ["cache/objects", "cache/stages", "medbench.lock", "results"];
    const before = p.snapshot(written);
    const r = await p.run(["build", "specs/t1.yaml"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expectCleanFailure(r.stderr);
    expect(p.snapshot(written)).toBe(before);
    return r.stderr;
  }

  it("a package that is not installed is named at its import, with the fix", async () => {
    const pristine = p.read("tasks/t1/scorer.ts");
    p.write("tasks/t1/scorer.ts", `import pad from "no-such-pad";\nvoid pad;\n${pristine}`);
    try {
      const stderr = await refused();
      expect(stderr).toMatch(
        /tasks\/t1\/scorer\.ts:1:17: imports no-such-pad, a package that is not installed/,
      );
      expect(stderr).toContain("npm install no-such-pad");
    } finally {
      p.write("tasks/t1/scorer.ts", pristine);
    }
  });

  it("an error thrown while the task's modules load is named, without a stack", async () => {
    const pristine = p.read("tasks/t1/scorer.ts");
    p.write("tasks/t1/scorer.ts", `${pristine}\nthrow new Error("the table is missing");\n`);
    try {
      expect(await refused()).toMatch(/loading the task's modules failed: the table is missing/);
    } finally {
      p.write("tasks/t1/scorer.ts", pristine);
    }
  });

  it("an index.ts that is a link", async () => {
    renameSync(p.path("tasks/t1/index.ts"), p.path("wiring.ts"));
    symlinkSync("../../wiring.ts", p.path("tasks/t1/index.ts"));
    try {
      // Refused by the task-source rules (no link in a task's folder) before its own check is reached.
      expect(await refused()).toMatch(/tasks\/t1\/index\.ts: a link in the task's folder/);
    } finally {
      rmSync(p.path("tasks/t1/index.ts"));
      renameSync(p.path("wiring.ts"), p.path("tasks/t1/index.ts"));
    }
  });
});
