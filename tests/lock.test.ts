// medbench.lock under faults: a lock file left by a killed build, a build that fails late.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { utimesSync } from "node:fs";
import { hostname } from "node:os";
import { spawnSync } from "node:child_process";
import { Project } from "./rig.js";

const SPEC = "specs/voice-command.yaml";

describe("medbench.lock", () => {
  let p: Project;
  beforeEach(() => {
    p = new Project();
  });
  afterEach(() => p.remove());

  it("a lock file whose owner is gone is taken at once", async () => {
    // The pid of a process that has exited; the file's mtime in the future, so that no age rule takes it.
    const dead = spawnSync("node", ["-e", "0"]);
    p.write("medbench.lock.lck", `${dead.pid} ${hostname()}\n`);
    const future = new Date(Date.now() + 3600_000);
    utimesSync(p.path("medbench.lock.lck"), future, future);
    const r = await p.run(["build", SPEC, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(p.exists("medbench.lock")).toBe(true);
    expect(p.exists("medbench.lock.lck")).toBe(false);
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
