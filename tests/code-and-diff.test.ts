// Editing code reruns the stages that run it (never stale compiled code under a fresh key);
// diff shows what a spec change invalidates.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { Project } from "./rig.js";
import { REPO } from "./helpers.js";

describe("code identity", () => {
  let install: string;
  let p: Project;
  beforeAll(() => {
    // A copy of medbench itself, so that its code can be edited (and recompiled) without touching the repo.
    install = mkdtempSync(join(tmpdir(), "medbench-install-"));
    for (const d of [
      "bin",
      "dist",
      "src",
      "stages",
      "tasks",
      "specs",
      "registry",
      "scripts",
      "package.json",
      "package-lock.json",
      "tsconfig.json",
    ])
      cpSync(resolve(REPO, d), join(install, d), { recursive: true });
    symlinkSync(resolve(REPO, "node_modules"), join(install, "node_modules"));
    p = new Project();
  });
  afterAll(() => {
    rmSync(install, { recursive: true, force: true });
    p.remove();
  });
  const bin = () => join(install, "bin/medbench.js");
  const compile = async () => {
    await execa("node", [resolve(REPO, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], {
      cwd: install,
    });
    await execa("node", ["scripts/record-sources.mjs"], { cwd: install });
  };
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
  const metrics = () => p.read("results/kor-surgical-robot-voice-command/medbench_prior/metrics.json");

  it("refuses to run compiled code older than its source, and changes nothing", async () => {
    await build();
    const lock = p.read("medbench.lock");
    const before = metrics();
    const scorer = join(install, "tasks/voice-command/scorer.ts");
    writeFileSync(
      scorer,
      readFileSync(scorer, "utf8").replace(`"exact match, clean"`, `"exact match (clean subset)"`),
    );
    for (const cmd of ["build", "status"]) {
      const r = await p.run([cmd, "specs/voice-command.yaml"], {}, bin());
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        "tasks/voice-command/scorer.ts: this source changed since dist/ was compiled",
      );
      expect(r.stderr).toContain("npm run build");
      expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
    }
    expect(p.read("medbench.lock")).toBe(lock);
    expect(metrics()).toBe(before);
  });

  it("once compiled, the edit reruns the stages that call the task and shows in the result", async () => {
    await compile();
    const status = await p.run(["status", "specs/voice-command.yaml"], {}, bin());
    expect(status.stdout).toMatch(/stale\s+prompts[\s\S]*code changed: tasks\/voice-command\/scorer\.ts/);
    expect(status.stdout).toMatch(/fresh\s+download/);
    const s = await build();
    expect(s).toMatchObject({ download: "fresh", score: "ran" });
    expect(metrics()).toContain("exact match (clean subset)");
    // Built again: everything is fresh, and the new label stays.
    expect(Object.values(await build()).every((v) => v === "fresh")).toBe(true);
    expect(metrics()).toContain("exact match (clean subset)");
  });

  it("editing the task's wiring module reruns the stages that call the task", async () => {
    appendFileSync(join(install, "tasks/voice-command/index.ts"), "\n// a wiring edit\n");
    await compile();
    const status = await p.run(["status", "specs/voice-command.yaml"], {}, bin());
    expect(status.stdout).toMatch(/code changed: tasks\/voice-command\/index\.ts/);
    const s = await build();
    expect(s).toMatchObject({ download: "fresh", prompts: "ran", parse: "ran", score: "ran" });
  });

  it("editing a shared statistics module reruns bootstrap only", async () => {
    appendFileSync(join(install, "src/stats/intervals.ts"), "\n// an edit\n");
    await compile();
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

  it("a package version change reruns the stages whose code imports it", async () => {
    const lockFile = join(install, "package-lock.json");
    const npmLock = JSON.parse(readFileSync(lockFile, "utf8"));
    npmLock.packages["node_modules/@stdlib/stats-base-dists-beta-quantile"].version = "0.0.0-test";
    writeFileSync(lockFile, JSON.stringify(npmLock));
    const status = await p.run(["status", "specs/voice-command.yaml"], {}, bin());
    expect(status.stdout).toMatch(
      /package changed: @stdlib\/stats-base-dists-beta-quantile \S+ -> 0\.0\.0-test/,
    );
    expect(await build()).toMatchObject({ score: "fresh", bootstrap: "ran" });
  });

  it("a lock written by the previous hash recipe gets one clear message, and nothing runs", async () => {
    const lock = JSON.parse(p.read("medbench.lock"));
    lock.hash_recipe = 1;
    p.write("medbench.lock", JSON.stringify(lock, null, 2));
    const before = p.read("medbench.lock");
    const r = await p.run(["build", "specs/voice-command.yaml"], {}, bin());
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("written with hash recipe 1");
    expect(r.stderr).toContain("mv medbench.lock medbench.lock.old");
    expect(p.read("medbench.lock")).toBe(before);
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
