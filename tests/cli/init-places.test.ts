// init and new-task write new files in real folders of the project: a name that is a folder, a link
// (dangling or to a file outside) or a folder on the way that is a link or a file is refused, exit 2, no
// stack trace, nothing written anywhere.
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Project, expectCleanFailure } from "../support/rig.js";

/** A fresh empty project, and a folder outside it holding one file. */
function setUp(): { p: Project; outside: string } {
  const p = new Project(false);
  const outside = mkdtempSync(join(tmpdir(), "medbench-outside-"));
  writeFileSync(join(outside, "keep.txt"), "keep\n");
  return { p, outside };
}

async function refused(p: Project, args: string[], what: RegExp): Promise<void> {
  const r = await p.run(args);
  expect(r.exitCode, r.stdout + r.stderr).toBe(2);
  expectCleanFailure(r.stderr);
  expect(r.stderr).toMatch(what);
}

describe("init and new-task write only new files in real folders", () => {
  it("init: .gitignore a folder, a dangling link, a link outside; routes.yaml a dangling link", async () => {
    const { p, outside } = setUp();
    const cases: [string, () => void, RegExp][] = [
      [".gitignore", () => mkdirSync(p.path(".gitignore")), /\.gitignore exists and is not a plain file/],
      [".gitignore", () => symlinkSync(join(outside, "none"), p.path(".gitignore")), /\.gitignore/],
      [".gitignore", () => symlinkSync(join(outside, "keep.txt"), p.path(".gitignore")), /\.gitignore/],
      [
        "routes.yaml",
        () => symlinkSync(join(outside, "none"), p.path("routes.yaml")),
        /routes\.yaml exists/,
      ],
    ];
    for (const [name, make, what] of cases) {
      make();
      await refused(p, ["init"], what);
      expect(readdirSync(p.dir)).toEqual([name]);
      rmSync(p.path(name), { recursive: true });
    }
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
    expect(readFileSync(join(outside, "keep.txt"), "utf8")).toBe("keep\n");
    p.remove();
    rmSync(outside, { recursive: true });
  });

  it("--project naming a file, and specs/ a link out of the project", async () => {
    const { p, outside } = setUp();
    p.write("afile", "x");
    await refused(p, ["init", "--project", "afile"], /afile is not a folder/);
    await refused(p, ["new-task", "t1", "--project", "afile"], /afile is not a folder/);
    symlinkSync(outside, p.path("specs"));
    await refused(p, ["new-task", "t1"], /specs is a link/);
    await refused(p, ["init", "--task", "voice-command"], /specs is a link/);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
    expect(readdirSync(p.dir).sort()).toEqual(["afile", "specs"]);
    p.remove();
    rmSync(outside, { recursive: true });
  });

  it("a flag they do not take is refused by name, as every other command's", async () => {
    const { p, outside } = setUp();
    await refused(p, ["init", "--model", "a/b"], /init does not take --model; its options: --task/);
    await refused(p, ["new-task", "t1", "--limit", "2"], /new-task does not take --limit; its options/);
    expect(readdirSync(p.dir)).toEqual([]);
    p.remove();
    rmSync(outside, { recursive: true });
  });

  it("--project missing two levels deep: refused, not made (recursive mkdir hangs on /proc/x)", async () => {
    const { p, outside } = setUp();
    await refused(p, ["init", "--project", "a/b"], /cannot make the folder .*a\/b \(ENOENT\)/);
    await refused(p, ["new-task", "t1", "--project", "a/b"], /cannot make the folder/);
    expect(readdirSync(p.dir)).toEqual([]);
    p.remove();
    rmSync(outside, { recursive: true });
  });
});

describe("a built-in spec's name that the project also has a spec of", () => {
  it("is refused (both would be one medbench.lock entry); the project's spec builds by path", async () => {
    const p = new Project(false);
    try {
      expect((await p.run(["init", "--task", "voice-command"])).exitCode).toBe(0);
      const before = readdirSync(p.dir).sort();
      for (const command of ["build", "status"])
        await refused(
          p,
          [command, "voice-command"],
          new RegExp(
            "voice-command names both medbench's built-in spec and this project's " +
              `specs/voice-command.yaml.*medbench ${command} specs/voice-command.yaml`,
          ),
        );
      expect(readdirSync(p.dir).sort()).toEqual(before); // no cache, no lock, no results
      const built = await p.run(["build", "specs/voice-command.yaml", "--quiet"]);
      expect(built.exitCode, built.stderr).toBe(0);
      expect(Object.keys(JSON.parse(p.read("medbench.lock")).specs)).toEqual(["specs/voice-command.yaml"]);
    } finally {
      p.remove();
    }
  });
});
