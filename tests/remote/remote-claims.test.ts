// Machines sharing one remote, without --shard, claim each request before sending it (src/remote/claims.ts):
// project clones with their own caches, built at the same time against the fake server and the S3 server
// (which refuses a second conditional write of a name, as AWS S3 does).
import { afterEach, describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";
import { cleanUp, clone, remoteEnv, results, startFake, startS3, warnings } from "../support/remote-rig.js";

afterEach(cleanUp);

describe("claims on requests in a shared remote", () => {
  it("lets four machines build one model at once with no request body sent twice", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake({ latencyMs: 30 })]);
    const machines = [1, 2, 3, 4].map(() => clone(fake));
    const runs = await Promise.all(machines.map((machine) => machine.buildAgainstFake([], remoteEnv(s3))));
    for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
    for (const run of runs) expect(warnings(run.stderr)).toEqual([]);
    const counts = [...fake.stats.bodies.values()];
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.filter((count) => count > 1)).toEqual([]);
    const sent = fake.stats.requests;

    const solo = clone(fake); // one machine, no remote
    expect((await solo.buildAgainstFake()).exitCode).toBe(0);
    expect(fake.stats.requests).toBe(2 * sent);
    for (const machine of machines) expect(results(machine)).toEqual(results(solo));
  });

  it("takes over the requests a killed machine claimed, losing none", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake({ latencyMs: 60 })]);
    const [doomed, survivor] = [clone(fake), clone(fake)];
    // Its claims say their TTL, which the survivor waits out.
    const dying = doomed.start(Project.fakeBuildArgs(), { ...remoteEnv(s3), MEDBENCH_CLAIM_TTL_S: "2" });
    while (fake.stats.requests < 6) {
      if (dying.exitCode !== null)
        throw new Error(`the build ended first:\n${String((await dying).stderr)}`);
      await new Promise((wake) => setTimeout(wake, 10));
    }
    dying.kill("SIGKILL");
    await dying;
    const run = await survivor.buildAgainstFake([], remoteEnv(s3));
    expect(run.exitCode, run.stderr).toBe(0);
    const solo = clone(fake);
    expect((await solo.buildAgainstFake()).exitCode).toBe(0);
    expect(results(survivor)).toEqual(results(solo));
  });

  it("says once that a store cannot claim, and builds as before", async () => {
    const [s3, fake] = await Promise.all([startS3(["--no-conditional-writes"]), startFake()]);
    const machine = clone(fake);
    const run = await machine.buildAgainstFake([], remoteEnv(s3));
    expect(run.exitCode, run.stderr).toBe(0);
    const said = warnings(run.stderr);
    expect(said.length, said.join("\n")).toBe(1);
    expect(said[0]).toMatch(/does not refuse a conditional write \(If-None-Match: \*\).*--shard/);
  });
});
