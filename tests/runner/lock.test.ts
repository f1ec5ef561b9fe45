// medbench.lock under faults (a lock file left by a killed build, a build that fails late), per variable
// set, and read from the older schema. On the fixture task (tests/fixtures/README.md).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFileSync, cpSync, mkdirSync, utimesSync } from "node:fs";
import { hostname } from "node:os";
import { spawnSync } from "node:child_process";
import { Project, SUMS_SPECS } from "../support/rig.js";
import { startFake } from "../support/fake.js";

const SPEC = "specs/sums.yaml";
const OTHER = ["--model", "medbench/constant"];

/** `build --frozen` of each variant passes, and medbench.lock stays as it was. */
async function expectFrozen(p: Project, variants: string[][]): Promise<void> {
  const lock = p.read("medbench.lock");
  for (const args of variants) {
    const r = await p.run(["build", SPEC, "--frozen", "--quiet", ...args]);
    expect(r.exitCode, r.stderr).toBe(0);
  }
  expect(p.read("medbench.lock")).toBe(lock);
}

describe("medbench.lock", () => {
  let p: Project;
  beforeEach(() => {
    p = new Project(SUMS_SPECS);
  });
  afterEach(() => p.remove());

  it("a lock file whose owner is gone is taken at once", async () => {
    // The pid of a process that has exited; the file's mtime in the future, so that no age rule takes it.
    const dead = spawnSync("node", ["-e", "0"]);
    // medbench.lock's own lock lives in the cache (src/runner/results/lock.ts), not in the project folder.
    const guard = "cache/locks/medbench.lock.lck";
    mkdirSync(p.path("cache/locks"), { recursive: true });
    p.write(guard, `${dead.pid} ${hostname()}\n`);
    const future = new Date(Date.now() + 3600_000);
    utimesSync(p.path(guard), future, future);
    const r = await p.run(["build", SPEC, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(p.exists("medbench.lock")).toBe(true);
    expect(p.exists(guard)).toBe(false);
  });

  it("a build that fails on a results file naming a missing output writes no lock", async () => {
    p.edit(SPEC, (t) =>
      t.replace("    metrics.json: bootstrap/metrics\n", "    metrics.json: bootstrap/nosuch\n"),
    );
    const r = await p.run(["build", SPEC]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/nosuch/);
    expect(p.exists("medbench.lock")).toBe(false);
    expect(p.exists("results")).toBe(false);
  });
});

describe("medbench.lock per variable set", () => {
  let p: Project;
  beforeEach(() => {
    p = new Project(SUMS_SPECS);
  });
  afterEach(() => p.remove());

  it("records each model's build: alternating them changes nothing, --frozen passes for both", async () => {
    expect((await p.run(["build", SPEC, "--quiet"])).exitCode).toBe(0);
    expect((await p.run(["build", SPEC, "--quiet", ...OTHER])).exitCode).toBe(0);
    const lock = p.read("medbench.lock");
    expect(Object.keys(JSON.parse(lock).specs[SPEC].builds)).toEqual([
      "limit=null model=medbench/calculator subset=null",
      "limit=null model=medbench/constant subset=null",
    ]);
    await expectFrozen(p, [[], OTHER, [], OTHER]);
    expect((await p.run(["build", SPEC, "--quiet"])).exitCode).toBe(0);
    expect(p.read("medbench.lock")).toBe(lock);
  });

  // A build from the bundled sample and one from a release the user downloaded are two builds of the
  // same variables: the lock keeps both.
  it("keeps the sample build and the --data-dir build side by side", async () => {
    cpSync(p.path("specs/sums/sample"), p.path("release"), { recursive: true });
    await p.buildSpec(SPEC);
    const released = await p.buildSpec(SPEC, ["--data-dir", "release"]);
    expect(released.status.download).toBe("ran"); // the release is another source: its own stage keys
    const builds = Object.keys(JSON.parse(p.read("medbench.lock")).specs[SPEC].builds);
    expect(builds).toHaveLength(2);
    expect(builds.filter((b) => b.endsWith(" data=--data-dir"))).toHaveLength(1);
    await expectFrozen(p, [[], ["--data-dir", "release"]]);
    const status = await p.run(["status", SPEC, "--data-dir", "release"]);
    expect(status.stdout).not.toMatch(/stale|never built/);
  });

  it("--frozen refuses a variable set the lock does not hold before any model request is sent", async () => {
    const fake = await startFake({});
    try {
      p.write(
        "routes.yaml",
        `routes:\n  fake:\n    base_url: ${fake.url}\n    request:\n` +
          `      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n`,
      );
      expect((await p.run(["build", SPEC, "--quiet"])).exitCode).toBe(0);
      const before = p.snapshot(["medbench.lock", "results"]);
      const r = await p.run([
        "build",
        SPEC,
        "--frozen",
        "--model",
        "fake/new-model",
        "--registry",
        "routes.yaml",
      ]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(
        /medbench\.lock records no build of specs\/sums\.yaml with .*fake\/new-model/,
      );
      expect(r.stderr).toMatch(/fix: run `medbench build` without --frozen/);
      expect(fake.stats.requests).toBe(0);
      expect(p.snapshot(["medbench.lock", "results"])).toBe(before);
      // A stage whose key moved is refused the same way, before it runs.
      p.edit(SPEC, (t) => t.replace("tolerance: 0", "tolerance: 1"));
      const moved = await p.run(["build", SPEC, "--frozen"]);
      expect(moved.exitCode).toBe(1);
      expect(moved.stderr).toMatch(/stage score: its key differs from the locked one/);
    } finally {
      await fake.close();
    }
  });

  it("reads a schema-1 lock: keeps what was trusted, records builds anew", async () => {
    // A release without published pins, trusted on first use (recorded in the lock's pins).
    cpSync(p.path("specs/sums/sample"), p.path("data"), { recursive: true });
    const fromData = ["build", SPEC, "--quiet", "--data-dir", "data"];
    expect((await p.run(fromData)).exitCode).toBe(0);
    expect((await p.run(["build", SPEC, "--quiet"])).exitCode).toBe(0);
    const now = JSON.parse(p.read("medbench.lock"));
    const entry = now.specs[SPEC];
    // Schema 1 held one build per spec: the sample build's (the --data-dir one is recorded apart now).
    expect(Object.keys(entry.builds)).toHaveLength(2);
    const sampleBuild = Object.keys(entry.builds).find((id) => !id.includes("data="))!;
    const sampleOnly = { [sampleBuild]: entry.builds[sampleBuild] };
    const old = {
      ...now,
      schema: 1,
      specs: {
        [SPEC]: {
          slug: entry.slug,
          spec_hash: entry.spec_hash,
          pins: entry.pins,
          stages: entry.builds[sampleBuild].stages,
        },
      },
    };
    p.write("medbench.lock", JSON.stringify(old));
    const frozen = await p.run(["build", SPEC, "--frozen", "--quiet"]);
    expect(frozen.exitCode).toBe(1); // the migrated lock gains its build record
    const r = await p.run(["build", SPEC, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const migrated = JSON.parse(p.read("medbench.lock"));
    expect(migrated.schema).toBe(2);
    expect(migrated.specs[SPEC].pins).toEqual(entry.pins);
    expect(migrated.specs[SPEC].builds).toEqual(sampleOnly);
    // What was trusted still holds: a changed release file is refused.
    appendFileSync(
      p.path("data/items.jsonl"),
      '{"id": "q9", "unit": "u9", "subset": "hard", "a": 1, "b": 2}\n',
    );
    const changed = await p.run(fromData);
    expect(changed.exitCode).toBe(1);
    expect(changed.stderr).toContain("items.jsonl changed since it was trusted on first use");
  });
});
