// A shared remote under load: a store that answers "slow down" (503 SlowDown) to one call in three, and a
// store that answers every call late, over real HTTP (scripts/s3-server.mjs's `throttle` and `delay`).
import { afterEach, describe, expect, it } from "vitest";
import { throttleWaitMs } from "../../src/remote/pace.js";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import {
  cleanUp,
  everyWarning,
  clone,
  PREFIX,
  remoteEnv,
  results,
  startFake,
  startS3,
  warnings,
} from "../support/remote-rig.js";

afterEach(cleanUp);

describe("a throttled or slow shared remote", () => {
  it("tries a throttled call again, so the replies are still shared", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    await s3.throttle(3);
    const first = clone(fake);
    const run = await first.buildAgainstFake([], remoteEnv(s3));
    expect(run.exitCode, run.stderr).toBe(0);
    expect(warnings(run.stderr)).toEqual([]);
    expect(await s3.throttled()).toBeGreaterThan(0); // calls were answered "slow down", and tried again
    // Every reply reached the remote (a later build's model stage finds them one by one).
    const stored = readdirSync(join(s3.dir, "medbench", PREFIX, "replies/requests")).filter((name) =>
      name.endsWith("._S3rver_object"),
    );
    expect(stored.length).toBe(fake.stats.bodies.size);
    const sent = fake.stats.requests;

    const second = clone(fake);
    const again = await second.buildAgainstFake([], remoteEnv(s3));
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fake.stats.requests - sent).toBe(0);
    expect(results(second)).toEqual(results(first));
  });

  it("says once, at the end, that a slow remote was the build's bottleneck", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const fast = clone(fake);
    const quick = await fast.buildAgainstFake(["--limit", "1"], remoteEnv(s3));
    expect(warnings(quick.stderr)).toEqual([]);
    await s3.delay(1500);
    const slow = clone(fake);
    const run = await slow.buildAgainstFake(["--limit", "1"], remoteEnv(s3));
    expect(run.exitCode, run.stderr).toBe(0);
    const said = everyWarning(run.stderr);
    expect(said.length, said.join("\n")).toBe(1);
    expect(said[0]).toMatch(
      /was the bottleneck of this build: its median call took \d+\.\d s over \d+ calls/,
    );
  });

  it("waits a jittered, growing time before each new try, up to 5 s", () => {
    const ceilings = [1, 2, 3, 4, 5, 6, 10].map((attempt) => throttleWaitMs(attempt, () => 0.999999));
    expect(ceilings).toEqual([399, 799, 1599, 3199, 4999, 4999, 4999]);
    expect(throttleWaitMs(3, () => 0)).toBe(0);
  });
});
