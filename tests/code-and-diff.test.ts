// Editing code reruns the stages that run it and nothing upstream; diff shows what a spec change invalidates.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { Project } from "./rig.js";
import { REPO } from "./helpers.js";

describe("code identity", () => {
  let install: string;
  let p: Project;
  beforeAll(() => {
    // A copy of medbench itself, so that its sources can be edited without touching the repo.
    install = mkdtempSync(join(tmpdir(), "medbench-install-"));
    for (const d of ["bin", "dist", "src", "stages", "tasks", "specs", "registry", "package.json"])
      cpSync(resolve(REPO, d), join(install, d), { recursive: true });
    symlinkSync(resolve(REPO, "node_modules"), join(install, "node_modules"));
    p = new Project();
  });
  afterAll(() => {
    rmSync(install, { recursive: true, force: true });
    p.remove();
  });
  const bin = () => join(install, "bin/medbench.js");
  const build = async () => {
    const r = await p.run(["build", "specs/voice-command.yaml", "--json"], {}, bin());
    expect(r.exitCode, r.stderr).toBe(0);
    return Object.fromEntries(
      JSON.parse(r.stdout.trim().split("\n").pop()!).stages.map((s: { name: string; status: string }) => [
        s.name,
        s.status,
      ]),
    );
  };

  it("editing the scorer reruns score and nothing upstream", async () => {
    await build();
    appendFileSync(join(install, "tasks/voice-command/scorer.ts"), "\n// an edit\n");
    const status = await p.run(["status", "specs/voice-command.yaml"], {}, bin());
    expect(status.stdout).toMatch(/stale\s+score[\s\S]*code changed: tasks\/voice-command\/scorer\.ts/);
    expect(status.stdout).toMatch(/fresh\s+parse/);
    const s = await build();
    expect(s).toMatchObject({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
      score: "ran",
    });
  });

  it("editing a shared statistics module reruns bootstrap only", async () => {
    appendFileSync(join(install, "src/stats/intervals.ts"), "\n// an edit\n");
    const s = await build();
    expect(s).toEqual({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
      score: "fresh",
      bootstrap: "ran",
    });
  });
});

describe("medbench diff", () => {
  let p: Project;
  const git = (...a: string[]) => execa("git", a, { cwd: p.dir });
  beforeAll(async () => {
    p = new Project();
    await git("init", "-q");
    await git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
    await git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1");
    await git("tag", "v1");
  });
  afterAll(() => p.remove());

  it("shows both hashes, each changed field and the stages it invalidates", async () => {
    p.edit("specs/voice-command.yaml", (t) => t.replace("resamples: 1000", "resamples: 2000"));
    const r = await p.run(["diff", "v1:specs/voice-command.yaml", "specs/voice-command.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/A v1:specs\/voice-command\.yaml\s+spec_hash 3bc7dc79/);
    expect(r.stdout).toContain("/stages/bootstrap/params/resamples: 1000 -> 2000");
    expect(r.stdout).toMatch(/stages invalidated:\n\s+bootstrap: params resamples: 1000 -> 2000\n?$/);
  });

  it("follows a published-spec change into the stages that read it, and downstream", async () => {
    p.edit("specs/voice-command.yaml", (t) =>
      t.replace(/(\n\s+request:\n(?:.*\n)*?\s+max_tokens: )800\n/, "$11024\n").replace(/spec_hash: .*\n/, ""),
    );
    const r = await p.run(["diff", "v1:specs/voice-command.yaml", "specs/voice-command.yaml", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.a.spec_hash).toBe("3bc7dc79688a46dc00af2790c9d049d196d1da86de20a637020129b5336e6551");
    expect(d.b.spec_hash).not.toBe(d.a.spec_hash);
    expect(d.fields).toContainEqual({ path: "/spec/request/max_tokens", from: 800, to: 1024 });
    expect(d.stages.map((s: { name: string }) => s.name)).toEqual(["model", "parse", "score", "bootstrap"]);
    expect(d.stages[0].reasons).toContain("params max_tokens: 800 -> 1024");
    expect(d.stages[1].reasons).toEqual(["downstream of model"]);
  });

  it("refuses a revision git does not have", async () => {
    const r = await p.run(["diff", "nope:specs/voice-command.yaml", "specs/voice-command.yaml"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/git has no specs\/voice-command\.yaml at revision nope/);
  });
});
