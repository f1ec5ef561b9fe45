// A task of the user's repository runs from its compiled copy under cache/compiled/
// (src/runner/code/user-task.ts). That copy and its compiled.json are cache entries: edited, they must
// change no result and remove nothing outside the compiled folder. A bundle of such a task carries its
// code: verify runs it only when asked.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";

/** A fresh project with the task `t1` of `new-task`, built once. */
async function builtProject(): Promise<Project> {
  const p = new Project(false);
  expect((await p.run(["init"])).exitCode).toBe(0);
  expect((await p.run(["new-task", "t1"])).exitCode).toBe(0);
  await p.buildSpec("specs/t1.yaml");
  return p;
}

const accuracy = (p: Project): number =>
  (
    JSON.parse(p.read("results/t1/medbench_reference/metrics.json")) as {
      metrics: { accuracy: { value: number } };
    }
  ).metrics.accuracy.value;

describe("the compiled copy of a user's task, edited", () => {
  it("an edited compiled module is compiled again from the source, not run", async () => {
    const p = await builtProject();
    expect(accuracy(p)).toBe(1);
    const scorer = "cache/compiled/tasks/t1/scorer.js";
    p.edit(scorer, (t) => t.replace("answer === r.meta.gold", "answer !== r.meta.gold"));
    const again = await p.buildSpec("specs/t1.yaml");
    expect(accuracy(p)).toBe(1);
    expect(Object.values(again.status).every((s) => s === "fresh")).toBe(true);
    expect(p.read(scorer)).toContain("answer === r.meta.gold");
    p.remove();
  });

  it("a compiled.json naming a path outside its folder removes nothing there", async () => {
    const p = await builtProject();
    const manifest = "cache/compiled/tasks/t1/compiled.json";
    const readme = p.read("README.md");
    // As an older, unsealed manifest, and as a sealed one's body edited in place.
    for (const edit of [(t: string) => t.replace(/^medbench-sealed[^\n]*\n/, ""), (t: string) => t]) {
      p.edit(manifest, (t) =>
        edit(t).replace('"baselines.ts"', '"../../../../README.md": "x",\n "baselines.ts"'),
      );
      const r = await p.run(["build", "specs/t1.yaml"]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(p.read("README.md")).toBe(readme);
      expect(accuracy(p)).toBe(1);
    }
    p.remove();
  });
});

describe("the compiled folder of a user's task is cleaned and written only as medbench's own", () => {
  it("without its compiled.json, only compiled modules are dropped: another file stays", async () => {
    const p = await builtProject();
    p.write("cache/compiled/tasks/t1/notes.txt", "mine\n");
    p.write("cache/compiled/tasks/t1/gone.js", "module.exports = 1;\n"); // a module of a removed source
    rmSync(p.path("cache/compiled/tasks/t1/compiled.json"));
    const r = await p.run(["build", "specs/t1.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(p.read("cache/compiled/tasks/t1/notes.txt")).toBe("mine\n");
    expect(p.exists("cache/compiled/tasks/t1/gone.js")).toBe(false);
    expect(p.exists("cache/compiled/tasks/t1/compiled.json")).toBe(true);
    expect(accuracy(p)).toBe(1);
    p.remove();
  });

  it("a compiled folder that is or holds a link is refused: nothing written or removed there", async () => {
    for (const linked of ["cache/compiled", "cache/compiled/tasks/t1/sub"]) {
      const p = await builtProject();
      const outside = mkdtempSync(join(tmpdir(), "medbench-outside-"));
      writeFileSync(join(outside, "keep.js"), "keep\n");
      if (linked === "cache/compiled") {
        cpSync(p.path("cache/compiled"), join(outside, "copy"), { recursive: true });
        rmSync(p.path("cache/compiled"), { recursive: true });
        symlinkSync(join(outside, "copy"), p.path("cache/compiled"));
      } else symlinkSync(outside, p.path(linked));
      rmSync(p.path("cache/compiled/tasks/t1/compiled.json"), { force: true }); // a clean-up is due
      const r = await p.run(["build", "specs/t1.yaml"]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/a link/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(readFileSync(join(outside, "keep.js"), "utf8")).toBe("keep\n");
      if (linked === "cache/compiled")
        expect(existsSync(join(outside, "copy/tasks/t1/scorer.js"))).toBe(true); // not cleaned through it
      rmSync(outside, { recursive: true });
      p.remove();
    }
  });
});

describe("a bundle of a user's task, verified", () => {
  it("is refused until the user agrees to run its code, then verifies", async () => {
    const p = await builtProject();
    const ex = await p.run(["export", "results/t1/medbench_reference", "-o", "t1.tar.gz"]);
    expect(ex.exitCode, ex.stderr).toBe(0);
    // Its code, edited to leave a mark when run: verify must not run it unasked.
    mkdirSync(p.path("unpacked"));
    await execa("tar", ["xzf", p.path("t1.tar.gz"), "-C", p.path("unpacked")]);
    p.edit("unpacked/spec/tasks/t1/index.ts", (t) => `${t}\nrequire("fs").writeFileSync("ran.txt", "x");\n`);
    for (const bundle of ["t1.tar.gz", "unpacked"]) {
      const refused = await p.run(["verify", bundle]);
      expect(refused.exitCode, refused.stdout + refused.stderr).toBe(2);
      expect(refused.stderr).toContain("tasks/t1/index.ts");
      expect(refused.stderr).toContain("--run-task-code");
    }
    expect(p.exists("ran.txt")).toBe(false);
    const ok = await p.run(["verify", "t1.tar.gz", "--run-task-code"]);
    expect(ok.exitCode, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain("verified: the published result is reproduced");
    p.remove();
  });
});

// A stage's key holds the task folder's own code, and only the folder's sources are
// compiled, so a module that imports a file outside it (../common/x.js, another task's module) would run
// code no key holds (an edit there reruns nothing) or another task's compiled copy. Refused at the import.
describe("a user's task imports only from its own folder", () => {
  const SCORER = "tasks/t1/scorer.ts";
  /** The scorer made to compare through `same`, imported from `from` (the first line of the file). */
  const importing = (from: string) => (t: string) =>
    `import { same } from "${from}";\n` + t.replace("answer === r.meta.gold", "same(answer, r.meta.gold)");
  const HELPER =
    "export const same = (a: unknown, b: unknown): boolean => a === b;\nexport type Verdict = boolean;\n";

  /** The build of t1, refused at line 1 of the scorer (exit 2, cleanly), and results and lock unchanged. */
  async function refusedAtImport(p: Project, message: RegExp): Promise<void> {
    const before = p.snapshot(["medbench.lock", "results"]);
    const r = await p.run(["build", "specs/t1.yaml"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).toMatch(/tasks\/t1\/scorer\.ts:1:22: imports /);
    expect(r.stderr).toMatch(message);
    expect(p.snapshot(["medbench.lock", "results"])).toBe(before);
  }

  it("refuses another task's module (its edit would rerun nothing) and a taskless folder", async () => {
    const p = new Project(false);
    try {
      expect((await p.run(["init"])).exitCode).toBe(0);
      for (const name of ["t1", "t2"]) expect((await p.run(["new-task", name])).exitCode).toBe(0);
      const pristine = p.read(SCORER);
      p.write("tasks/t2/helper.ts", HELPER);
      await p.buildSpec("specs/t2.yaml"); // t2's compiled helper exists in the cache
      p.edit(SCORER, importing("../t2/helper.js"));
      await refusedAtImport(
        p,
        new RegExp(
          String.raw`imports \.\./t2/helper\.js, outside the task's folder tasks/t1/(.|\n)*` +
            "fix: copy what it needs into tasks/t1/",
        ),
      );
      mkdirSync(p.path("tasks/common"));
      p.write("tasks/common/x.ts", HELPER);
      p.edit(SCORER, (t) => t.replace("../t2/helper.js", "../common/x.js"));
      await refusedAtImport(p, /imports \.\.\/common\/x\.js, outside the task's folder tasks\/t1\//);
      // Through a link in the folder, the file is still outside: the link itself is refused, first.
      symlinkSync("../common", p.path("tasks/t1/lib"));
      p.edit(SCORER, (t) => t.replace("../common/x.js", "./lib/x.js"));
      const linked = await p.run(["build", "specs/t1.yaml"]);
      expect(linked.exitCode, linked.stderr).toBe(2);
      expect(linked.stderr).toContain("tasks/t1/lib: a link in the task's folder");
      rmSync(p.path("tasks/t1/lib"));
      // The helper copied in, it builds; a type imported from outside is no code (the compiler drops it).
      p.write(SCORER, pristine);
      p.write("tasks/t1/helper.ts", HELPER);
      p.edit(
        SCORER,
        (t) => `import type { Verdict } from "../common/x.js";\n${importing("./helper.js")(t)}`,
      );
      await p.buildSpec("specs/t1.yaml");
      expect(accuracy(p)).toBe(1);
    } finally {
      p.remove();
    }
  });

  it("a part declared outside the folder is refused, even one loaded by a computed name", async () => {
    const p = new Project(false);
    try {
      expect((await p.run(["init"])).exitCode).toBe(0);
      for (const name of ["t1", "t2"]) expect((await p.run(["new-task", name])).exitCode).toBe(0);
      await p.buildSpec("specs/t2.yaml"); // t2's compiled scorer exists in the cache
      const index = p.read("tasks/t1/index.ts");
      // A name the import check cannot follow loads t2's scorer; `parts` says so.
      const loaded = index
        .replace(
          'import { score } from "./scorer.js";',
          'const other = "../t2/" + "scorer.js";\nconst { score } = require(other) as { score: never };',
        )
        .replace('score: "scorer.ts"', 'score: "../t2/scorer.ts"');
      expect(loaded).toContain("require(other)");
      const outside = (source: string) =>
        `tasks/t1/index.ts: parts.score names ${source}, ` +
        "which is not a source file inside the task's folder";
      for (const [text, said] of [
        // The computed name is refused first, where it is written, before any of the task's code runs.
        [loaded, "tasks/t1/index.ts:8:19: a computed module name"],
        [index.replace('score: "scorer.ts"', 'score: "../../README.md"'), outside("../../README.md")],
        [index.replace('score: "scorer.ts"', 'score: "/etc/hostname"'), outside("/etc/hostname")],
      ] as const) {
        p.write("tasks/t1/index.ts", text);
        const before = p.snapshot(["medbench.lock", "results"]);
        const r = await p.run(["build", "specs/t1.yaml"]);
        expect(r.exitCode, r.stderr).toBe(2);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stderr).toContain(said);
        expect(p.snapshot(["medbench.lock", "results"])).toBe(before);
      }
      // A link in the folder to another task's scorer is no source of the folder either.
      symlinkSync("../t2/scorer.ts", p.path("tasks/t1/linked.ts"));
      p.write(
        "tasks/t1/index.ts",
        index
          .replace('import { score } from "./scorer.js";', 'import { score } from "./linked.js";')
          .replace('score: "scorer.ts"', 'score: "linked.ts"'),
      );
      const r = await p.run(["build", "specs/t1.yaml"]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr).toContain("tasks/t1/linked.ts: a link in the task's folder");
    } finally {
      p.remove();
    }
  });
});
