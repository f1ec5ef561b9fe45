// A build from the bundled sample and one from a release the user downloaded (--data-dir) are two builds
// of the same variables: the lock keeps both, so alternating them changes nothing and --frozen passes for
// each (issue 10, "the lock records every built variable set").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync } from "node:fs";
import { Project, SUMS_SPECS } from "./rig.js";

const SPEC = "specs/sums.yaml";

describe("the lock with --data-dir builds", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project(SUMS_SPECS);
    cpSync(p.path("specs/sums/sample"), p.path("release"), { recursive: true });
  });
  afterAll(() => p.remove());

  it("keeps the sample build and the --data-dir build side by side", async () => {
    await p.buildSpec(SPEC);
    const released = await p.buildSpec(SPEC, ["--data-dir", "release"]);
    expect(released.status.download).toBe("ran"); // the release is another source: its own stage keys
    const lock = p.read("medbench.lock");
    const builds = Object.keys(JSON.parse(lock).specs[SPEC].builds);
    expect(builds).toHaveLength(2);
    expect(builds.filter((b) => b.endsWith(" data=--data-dir"))).toHaveLength(1);
    for (const args of [[], ["--data-dir", "release"]]) {
      const r = await p.run(["build", SPEC, "--frozen", "--quiet", ...args]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    expect(p.read("medbench.lock")).toBe(lock);
    const status = await p.run(["status", SPEC, "--data-dir", "release"]);
    expect(status.stdout).not.toMatch(/stale|never built/);
  });
});
