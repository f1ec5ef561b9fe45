// The shared remote's trust model: anyone who can write the bucket can plant a well-formed reply,
// so every object records the machine that wrote it, and a build and `verify --live` name the replies they
// took from the remote and whose they are.
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, clone, remoteEnv, startFake, startS3, RESULTS } from "../support/remote-rig.js";

afterEach(cleanUp);

describe("replies from the shared remote are named with the machine that wrote them", () => {
  it("in a build that takes them, and in verify --live", async () => {
    const s3 = await startS3();
    const fake = await startFake();
    const a = clone(fake);
    const b = clone(fake);
    const envA = { ...remoteEnv(s3), MEDBENCH_MACHINE_ID: "ci-runner-a" };
    const envB = { ...remoteEnv(s3), MEDBENCH_MACHINE_ID: "laptop-b" };

    const built = await a.buildAgainstFake([], envA);
    expect(built.exitCode, built.stderr).toBe(0);
    expect(built.stderr).not.toMatch(/came from the shared remote/); // A sent its own
    const sent = fake.stats.requests;

    const second = await b.buildAgainstFake([], envB);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent); // every reply from the remote
    expect(second.stderr).toMatch(
      "stages download, prompts, model, parse, score, bootstrap came from " +
        "the shared remote s3://medbench/team/medbench, written by ci-runner-a",
    );

    expect((await a.run(["export", RESULTS, "-o", "b.tar.gz"], envA)).exitCode).toBe(0);
    const verify = (p: typeof a, env: Record<string, string>) =>
      p.run(["verify", a.path("b.tar.gz"), "--live", "--registry", "routes.yaml", "--json"], env);
    const first = await verify(a, envA); // sends, and writes the live replies to the remote
    expect(first.exitCode, first.stderr).toBe(0);
    expect((JSON.parse(first.stdout) as { live: { from_remote: unknown } }).live.from_remote).toBeNull();

    const other = await verify(b, envB); // takes them from the remote
    expect(other.exitCode, other.stderr).toBe(0);
    const live = (
      JSON.parse(other.stdout) as {
        live: {
          from_remote: { remote: string; writers: { writer: string; replies: number; items: string[] }[] };
        };
      }
    ).live;
    expect(live.from_remote.remote).toBe("s3://medbench/team/medbench");
    expect(live.from_remote.writers.map((w) => w.writer)).toEqual(["ci-runner-a"]);
    expect(live.from_remote.writers[0]!.replies).toBeGreaterThan(0);
    expect(live.from_remote.writers[0]!.items.length).toBeGreaterThan(0);
    const c = clone(fake); // a third machine, for the text report (b keeps the replies it took)
    const text = await c.run(["verify", a.path("b.tar.gz"), "--live", "--registry", "routes.yaml"], envB);
    expect(text.stdout).toMatch(/replies came from the shared remote .*written by ci-runner-a \(items /);
  });
});
