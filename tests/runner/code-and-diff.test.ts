// Editing code reruns the stages that run it (never stale compiled code under a fresh key); diff shows what
// a spec change invalidates. On the fixture task (tests/fixtures/README.md) and an editable copy of
// medbench; a task source edited before and after compiling: tests/runner/runner-fixture.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execa } from "execa";
import { expectCleanFailure, Install, installedFixture, Project, SUMS_SPECS } from "../support/rig.js";

const SPEC = "specs/sums.yaml";

describe("code identity", () => {
  let install: Install;
  let p: Project;
  beforeAll(async () => {
    install = new Install();
    p = new Project(SUMS_SPECS);
    await p.buildSpec(SPEC, [], {}, install.bin);
  });
  afterAll(() => {
    install.remove();
    p.remove();
  });
  const build = async () => (await p.buildSpec(SPEC, [], {}, install.bin)).status;

  it("a wrapper written in the task's wiring module is refused: no key would hold its code", async () => {
    // A case once missed: index.ts changing what a part computes, with every stage fresh.
    const index = "tests/fixtures/sums/task/index.ts";
    const pristine = readFileSync(install.path(index), "utf8");
    install.edit(index, (t) =>
      t.replace("score: scoreTask,", "score: (i) => scoreTask({ ...i, params: { tolerance: 5 } }),"),
    );
    await install.compile();
    const before = p.snapshot();
    const r = await p.run(["build", SPEC], {}, install.bin);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${index}: score (score) is not an export of scorer.ts`);
    expect(r.stderr).toContain("a wrapper written in the wiring module belongs in the part's module");
    expectCleanFailure(r.stderr);
    expect(p.snapshot()).toBe(before);
    writeFileSync(install.path(index), pristine);
    await install.compile();
  });

  it("a wiring-module edit alone reruns nothing; a part's export swapped reruns its stage", async () => {
    appendFileSync(install.path("tests/fixtures/sums/task/index.ts"), "\n// a wiring edit\n");
    await install.compile();
    expect(Object.values(await build())).toEqual(Array(6).fill("fresh"));
    // The scorer's module exports another function with the same contract; index.ts now uses that one.
    appendFileSync(
      install.path("tests/fixtures/sums/task/scorer.ts"),
      '\nexport const strictScore: TaskModule["score"] = (i) => scoreTask({ ...i, params: {} });\n',
    );
    install.edit("tests/fixtures/sums/task/index.ts", (t) =>
      t
        .replace("score: scoreTask,", "score: strictScore,")
        .replace("scoreTask, statistics", "strictScore, statistics"),
    );
    await install.compile();
    const status = await p.run(["status", SPEC], {}, install.bin);
    expect(status.stdout).toMatch(/code changed: tests\/fixtures\/sums\/task\/scorer\.ts/);
    expect(status.stdout).toMatch(/task parts changed: .*score.*"scoreTask" -> "strictScore"/);
    expect(await build()).toMatchObject({
      download: "fresh",
      prompts: "fresh",
      parse: "fresh",
      score: "ran",
    });
  });

  it("editing a shared statistics module reruns bootstrap only", async () => {
    appendFileSync(install.path("src/stats/intervals.ts"), "\n// an edit\n");
    await install.compile();
    expect(await build()).toEqual({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
      score: "fresh",
      bootstrap: "ran",
    });
  });

  it("a lock pinning another version than the installed one is refused, as npm ci installs it", async () => {
    // No built-in stage loads an npm package (the beta quantile is bundled into dist/vendor), so the
    // fixture's scorer takes one on, as a user's task may.
    const scorer = "tests/fixtures/sums/task/scorer.ts";
    const pristineScorer = readFileSync(install.path(scorer), "utf8");
    install.edit(scorer, (text) => `import seedrandom from "seedrandom";\n${text}`);
    appendFileSync(install.path(scorer), "\nexport const draw = (seed: string) => seedrandom(seed)();\n");
    await install.compile();
    expect(await build()).toMatchObject({ score: "ran" });
    const lockFile = install.path("package-lock.json");
    const pristine = readFileSync(lockFile, "utf8");
    const npmLock = JSON.parse(pristine);
    npmLock.packages["node_modules/seedrandom"].version = "0.0.0-test";
    writeFileSync(lockFile, JSON.stringify(npmLock));
    const said = "package-lock.json pins seedrandom 0.0.0-test, and ";
    const status = await p.run(["status", SPEC], {}, install.bin);
    expect(status.exitCode, status.stdout).toBe(2);
    expect(status.stderr).toContain(said);
    const before = p.snapshot(["cache/stages", "cache/objects", "medbench.lock", "results"]);
    const r = await p.run(["build", SPEC], {}, install.bin);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(said);
    expect(r.stderr).toContain("run `npm ci`");
    expect(p.snapshot(["cache/stages", "cache/objects", "medbench.lock", "results"])).toBe(before);
    writeFileSync(lockFile, pristine);
    expect(await build()).toMatchObject({ score: "fresh", bootstrap: "fresh" });
    writeFileSync(install.path(scorer), pristineScorer);
    await install.compile();
  });

  it("a lock written by the previous hash recipe gets one clear message, and nothing runs", async () => {
    const lock = JSON.parse(p.read("medbench.lock"));
    lock.hash_recipe = 1;
    p.write("medbench.lock", JSON.stringify(lock, null, 2));
    const before = p.read("medbench.lock");
    const r = await p.run(["build", SPEC], {}, install.bin);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("written with hash recipe 1");
    expect(r.stderr).toContain("mv medbench.lock medbench.lock.old");
    expect(p.read("medbench.lock")).toBe(before);
  });
});

describe("a dist/ compiled before the resolver by path", () => {
  const { install, p: project } = installedFixture();

  it("runs, its modules found by Node's resolver (src/load/resolve-compiled.ts is a speed-up)", async () => {
    rmSync(install.path("dist/src/load/resolve-compiled.js"));
    const run = await project.run(["build", SPEC], {}, install.bin);
    expect(run.exitCode, run.stderr).toBe(0);
  });
});

describe("an incomplete compile", () => {
  const { install, p } = installedFixture();

  it("a compiled module missing from dist/ is refused with the fix; nothing is written", async () => {
    rmSync(install.path("dist/tests/fixtures/sums/task/parser.js"));
    const before = p.snapshot();
    const r = await p.run(["build", SPEC], {}, install.bin);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("dist/tests/fixtures/sums/task/parser.js is missing");
    expect(r.stderr).toContain("run `npm run build`");
    expectCleanFailure(r.stderr);
    expect(p.snapshot()).toBe(before);
    // An installed package (no tsconfig.json, no sources to compile) is installed again instead.
    const tsconfig = readFileSync(install.path("tsconfig.json"));
    rmSync(install.path("tsconfig.json"));
    const installed = await p.run(["build", SPEC], {}, install.bin);
    writeFileSync(install.path("tsconfig.json"), tsconfig);
    expect(installed.exitCode, installed.stderr).toBe(2);
    expect(installed.stderr).toContain("fix: install medbench again (npm install)");
  });

  it("a dist/ compiled without its CommonJS marker (tsc alone) says so", async () => {
    rmSync(install.path("dist/package.json"));
    const r = await p.run(["build", SPEC], {}, install.bin);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("medbench is not compiled (dist/package.json is missing)");
    expectCleanFailure(r.stderr);
  });

  it("an installed copy without dist/ says so; a checkout without it compiles on first use", async () => {
    rmSync(install.path("dist"), { recursive: true });
    // An installed package (no tsconfig.json): nothing to compile with, so it says to install again.
    const tsconfig = readFileSync(install.path("tsconfig.json"));
    rmSync(install.path("tsconfig.json"));
    const r = await p.run(["build", SPEC], {}, install.bin);
    writeFileSync(install.path("tsconfig.json"), tsconfig);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("medbench is not compiled (dist/src/cli/main.js is missing)");
    expect(r.stderr).toContain("fix: install medbench again (npm install)");
    expectCleanFailure(r.stderr);
    // A checkout after `npm ci` (which runs no install script): the first command compiles it, then runs.
    const first = await p.run(["build", SPEC], {}, install.bin);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stderr).toContain("medbench: compiling this checkout on first use (npm run build)");
    const again = await p.run(["build", SPEC], {}, install.bin);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("compiling this checkout");
    // The output of a source since removed: `npm run build` makes dist/ whole again, without it.
    writeFileSync(install.path("dist/src/a-removed-source.js"), "");
    const rebuilt = await execa("npm", ["run", "--silent", "build"], { cwd: install.dir, reject: false });
    expect(rebuilt.exitCode, String(rebuilt.stderr)).toBe(0);
    expect(existsSync(install.path("dist/src/a-removed-source.js"))).toBe(false);
    expect(existsSync(install.path("dist/src/cli/main.js"))).toBe(true);
  }, 0); // it compiles the whole of medbench: no limit a slow machine could reach
});

describe("medbench diff", () => {
  let p: Project;
  let v1Hash: string;
  const git = (...a: string[]) => execa("git", a, { cwd: p.dir });
  beforeAll(async () => {
    p = new Project(SUMS_SPECS);
    await git("init", "-q");
    await git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
    await git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1");
    await git("tag", "v1");
    v1Hash = (await p.run(["hash", SPEC])).stdout.trim();
  });
  afterAll(() => p.remove());

  it("shows both hashes, each changed field and the stages it invalidates", async () => {
    p.edit(SPEC, (t) => t.replace("resamples: 200", "resamples: 400"));
    const r = await p.run(["diff", `v1:${SPEC}`, SPEC]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(v1Hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.stdout).toMatch(new RegExp(`A v1:specs/sums\\.yaml\\s+spec_hash ${v1Hash.slice(0, 8)}`));
    expect(r.stdout).toContain("/stages/bootstrap/params/resamples: 200 -> 400");
    expect(r.stdout).toMatch(/stages invalidated:\n\s+bootstrap: params resamples: 200 -> 400\n?$/);
  });

  it("follows a published-spec change into the stages that read it, and downstream", async () => {
    p.edit(SPEC, (t) => t.replace(/(\n\s+request:\n\s+max_tokens: )16\n/, "$132\n"));
    const r = await p.run(["diff", `v1:${SPEC}`, SPEC, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.a.spec_hash).toBe(v1Hash);
    expect(d.b.spec_hash).not.toBe(d.a.spec_hash);
    expect(d.fields).toContainEqual({ path: "/spec/request/max_tokens", from: 16, to: 32 });
    expect(d.stages.map((s: { name: string }) => s.name)).toEqual(["model", "parse", "score", "bootstrap"]);
    expect(d.stages[0].reasons).toContain("params max_tokens: 16 -> 32");
    expect(d.stages[1].reasons).toEqual(["downstream of model"]);
  });

  it("refuses a revision git does not have", async () => {
    const r = await p.run(["diff", `nope:${SPEC}`, SPEC]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/nope is not a git revision of this project/);
    const path = await p.run(["diff", `v1:specs/nope.yaml`, SPEC]);
    expect(path.exitCode).toBe(2);
    expect(path.stderr).toMatch(/git has no specs\/nope\.yaml at revision v1/);
  });
});
