// What a newcomer meets first when a command goes wrong: a misspelt command's fix names the command meant
// (by edit distance), a command's own fix goes to the `fix` field of --json's error object (not inside its
// message), and a roster whose registry is broken says the error once, not once per run.
import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { Project } from "../support/rig.js";

const projects: Project[] = [];
afterEach(() => projects.splice(0).forEach((p) => p.remove()));
const project = (specs = false) => {
  const p = new Project(specs);
  projects.push(p);
  return p;
};
const errorOf = (stdout: string) =>
  (JSON.parse(stdout.trim().split("\n").pop()!) as { error: { message: string; fix: string } }).error;

describe("a newcomer's mistakes", () => {
  it("a misspelt command: did you mean the nearest; else where the commands are listed", async () => {
    const p = project();
    const typo = await p.run(["biuld", "specs/voice-command.yaml", "--json"]);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toMatch(/unknown command "biuld"\n {2}fix: did you mean `medbench build`\?/);
    expect(errorOf(typo.stdout).fix).toMatch(/^did you mean `medbench build`\?/);
    const far = await p.run(["frob", "--json"]);
    expect(far.exitCode).toBe(2);
    expect(errorOf(far.stdout).fix).toBe("`medbench --help` lists the commands");
    expect(far.stderr).not.toContain("medbench frob --help");
  });

  it("--wait without --batch: refused unless a route sends batches by default", async () => {
    const p = project();
    const alone = await p.run(["build", "voice-command", "--wait", "--limit", "2"]);
    expect(alone.exitCode).toBe(2);
    expect(alone.stderr).toMatch(/--wait polls the provider batches .*\n {2}fix: add --batch/);
    expect(alone.stderr).not.toMatch(/\n\s+at /);
    p.write("routes.yaml", "routes:\n  batched:\n    base_url: http://127.0.0.1:9/v1\n    batch: true\n");
    const args = ["build", "voice-command", "--wait", "--limit", "2", "--registry", "routes.yaml"];
    const batched = await p.run(args);
    expect(batched.exitCode, batched.stderr).toBe(0);
  });

  it("init --json: the fix in its own field, the message without it", async () => {
    const p = project();
    mkdirSync(p.path(".gitignore")); // not a plain file: init refuses to write over it
    const init = await p.run(["init", "--json"]);
    expect(init.exitCode).toBe(2);
    const error = errorOf(init.stdout);
    expect(error.message).toMatch(/^init writes nothing through a link or over what is not a plain file/);
    expect(error.message).not.toContain("fix:");
    expect(error.fix).toBe("move them aside (or run init in a new folder), then run init again");
    expect(init.stderr).toContain("\n  fix: move them aside");
  });

  it("build --roster with a broken registry says its error once, then names the failed runs", async () => {
    const p = project(true);
    p.write("routes.yaml", "routes:\n  deepseek:\n    base_url: 12\n");
    const r = await p.run(["build", "specs/note-errors.yaml", "--roster", "--registry", "routes.yaml"]);
    expect(r.exitCode).not.toBe(0);
    const errors = r.stderr.split("\n").filter((line) => line.includes("routes.yaml:3:"));
    expect(errors.length, r.stderr).toBe(1);
    // The other seven runs failed the same way: each says so in one line.
    expect(
      r.stderr.split("\n").filter((line) => /^ {2}the same error as roster \d\/8/.test(line)).length,
    ).toBe(7);
  }, 0);
});
