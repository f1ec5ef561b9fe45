// The shared remote cache (MEDBENCH_REMOTE) over real HTTP: an S3-compatible server (s3rver, in its own
// process so that a test can kill it) and the fake OpenAI-compatible server, both on 127.0.0.1 port 0, and
// the CLI driven in separate project clones, each with its own local cache.
import { afterEach, describe, expect, it } from "vitest";
import { execa } from "execa";
import { Project } from "../support/rig.js";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  cleanUp,
  clone,
  PREFIX,
  remoteEnv,
  remoteObject,
  results,
  RESULTS,
  startFake,
  startS3,
  warnings,
} from "../support/remote-rig.js";

afterEach(cleanUp);

/** Replaces one byte of a stored remote object (its length and the server's own records stay as they
 *  were). */
function damage(file: string): void {
  const data = readFileSync(file);
  const i = Math.floor(data.length / 2);
  data[i] = data[i]! ^ 0x20;
  writeFileSync(file, data);
}

describe("a shared remote cache", () => {
  it("lets a second clone build the same spec and model with 0 model requests, byte for byte", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const a = clone(fake);
    const first = await a.buildAgainstFake([], remoteEnv(s3));
    expect(first.exitCode, first.stderr).toBe(0);
    const sent = fake.stats.requests;
    expect(sent).toBeGreaterThan(0);
    expect(warnings(first.stderr)).toEqual([]);

    const b = clone(fake);
    const second = await b.buildAgainstFake([], remoteEnv(s3));
    expect(second.exitCode, second.stderr).toBe(0);
    expect(fake.stats.requests - sent).toBe(0);
    expect(warnings(second.stderr)).toEqual([]);
    expect(results(b)).toEqual(results(a));
    expect(b.read("medbench.lock")).toBe(a.read("medbench.lock"));
    // Credentials reach no file of either clone (the SDK reads them from the environment).
    for (const p of [a, b]) {
      const { stdout } = await execa("grep", ["-rl", "S3RVER", p.dir], { reject: false });
      expect(stdout).toBe("");
    }
  });

  it("warns and falls back to the local cache when the remote dies mid-build, losing none", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake({ latencyMs: 40 })]);
    const p = clone(fake);
    const build = p.buildAgainstFake([], remoteEnv(s3));
    // Killed once the model stage is sending (the remote has answered its first reads and writes by then).
    while (fake.stats.requests < 12) await new Promise((r) => setTimeout(r, 10));
    s3.child.kill("SIGKILL");
    const r = await build;
    expect(r.exitCode, r.stderr).toBe(0);
    const w = warnings(r.stderr);
    expect(w.length, w.join("\n")).toBe(1);
    expect(w[0]).toMatch(/remote cache s3:\/\/medbench\/team\/medbench failed .*local cache only/);
    const m = JSON.parse(p.read(`${RESULTS}/metrics.json`));
    expect(m.metrics.api_errors).toBe(0);
    expect(m.incomplete).toBe(false);
    // Every reply is in the local cache: a rebuild without the remote sends nothing and finds all fresh.
    const sent = fake.stats.requests;
    const again = await p.build(["--model", "fake/test-model", "--registry", "routes.yaml"]);
    expect(fake.stats.requests).toBe(sent);
    expect(again.status.model).toBe("fresh");
  });

  it("refuses a damaged remote object, recomputes what it held, and warns once for it", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const a = clone(fake);
    expect((await a.buildAgainstFake([], remoteEnv(s3))).exitCode).toBe(0);
    const sent = fake.stats.requests;
    const lock = JSON.parse(a.read("medbench.lock"));
    type Builds = Record<string, { builds: Record<string, { stages: any }> }>;
    const [build] = Object.values(Object.values(lock.specs as Builds)[0]!.builds);
    const replies: string = build!.stages.model.outputs.replies;
    const replyOutput = remoteObject(s3, `objects/${replies.slice(0, 2)}/${replies}`);
    const oneReply = readdirSync(join(s3.dir, "medbench", PREFIX, "replies/requests")).find((f) =>
      f.endsWith("._S3rver_object"),
    )!;
    expect(existsSync(replyOutput)).toBe(true);
    damage(replyOutput);
    damage(join(s3.dir, "medbench", PREFIX, "replies/requests", oneReply));

    const b = clone(fake);
    const r = await b.buildAgainstFake([], remoteEnv(s3));
    expect(r.exitCode, r.stderr).toBe(0);
    const w = warnings(r.stderr);
    expect(w.length, w.join("\n")).toBe(2);
    expect(w.every((m) => /is damaged .*refused/.test(m))).toBe(true);
    expect(w.some((m) => m.includes(replies))).toBe(true);
    expect(w.some((m) => m.includes(oneReply.split(".")[0]!))).toBe(true);
    expect(fake.stats.requests - sent).toBe(1); // the damaged reply, sent again; the others read remotely
    expect(results(b)).toEqual(results(a));

    // Both were uploaded whole again: a third clone finds nothing damaged and sends nothing.
    const c = clone(fake);
    const third = await c.buildAgainstFake([], remoteEnv(s3));
    expect(warnings(third.stderr)).toEqual([]);
    expect(fake.stats.requests - sent).toBe(1);
  });

  it("splits a model stage over four shards, each request sent once; assembles it anywhere", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const shards = [1, 2, 3, 4].map(() => clone(fake));
    const runs = await Promise.all(
      shards.map((p, i) => p.buildAgainstFake(["--shard", `${i + 1}/4`], remoteEnv(s3))),
    );
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    for (const r of runs) expect(warnings(r.stderr)).toEqual([]);
    // A shard writes neither results nor lock.
    for (const p of shards) expect(p.exists("medbench.lock") || p.exists("results")).toBe(false);
    const counts = [...fake.stats.bodies.values()];
    expect(counts.every((n) => n === 1)).toBe(true);
    expect(fake.stats.requests).toBe(counts.length);
    const sent = fake.stats.requests;

    const assembler = clone(fake);
    const r = await assembler.buildAgainstFake([], remoteEnv(s3));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent);

    const solo = clone(fake); // one machine, no remote
    expect((await solo.buildAgainstFake()).exitCode).toBe(0);
    expect(fake.stats.requests).toBe(2 * sent); // the same requests, once each, from one machine
    expect(results(assembler)).toEqual(results(solo));
  });

  it("sends a body once when its twin's remote lookup is slower than its whole request", async () => {
    // --limit 1: one item per subset, all four in flight at once (the route's concurrency); the first ASR
    // item of two subsets is the same utterance, so the same body (and key).
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const probe = clone(fake); // no remote: which body is the twin, and its key
    expect((await probe.buildAgainstFake(["--limit", "1"])).exitCode).toBe(0);
    const replies = probe
      .read(`${RESULTS}.partial/replies.jsonl`)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { request_sha256: string });
    const keys = replies.map((r) => r.request_sha256);
    const twin = keys.find((k, i) => keys.indexOf(k) !== i)!;
    expect(replies.length).toBe(4);
    expect(twin).toMatch(/^[0-9a-f]{64}$/);
    const before = fake.stats.requests;
    expect(before).toBe(3);

    // The first lookup of the twin's key is answered (a miss: nothing is there); the second is held until
    // the first twin's reply is in the local reply log, then finds nothing in the remote either.
    await s3.stall(twin, 1, "miss");
    const p = clone(fake);
    const build = p.start(Project.fakeBuildArgs(["--limit", "1"]), remoteEnv(s3));
    const logs = p.path("cache/memo/requests");
    const stored = () =>
      existsSync(logs) &&
      readdirSync(logs).some(
        (f) => f.endsWith(".log") && readFileSync(join(logs, f), "utf8").includes(twin),
      );
    while (!stored()) await new Promise((r) => setTimeout(r, 5));
    await s3.go();
    const r = await build;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.requests - before).toBe(3); // the twin's body once, not twice
    expect(results(p, `${RESULTS}.partial`)).toEqual(results(probe, `${RESULTS}.partial`));
  });

  it("fails a shard whose share could not reach the remote; cache push delivers it later", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake({ latencyMs: 40 })]);
    const one = clone(fake);
    const build = one.buildAgainstFake(["--shard", "1/2"], remoteEnv(s3));
    while (fake.stats.requests < 6) await new Promise((r) => setTimeout(r, 10));
    s3.child.kill("SIGKILL");
    const r = await build;
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/shard 1\/2: the shared cache failed during the build/);
    expect(r.stderr).toMatch(/medbench cache push/);
    expect(r.stderr).not.toMatch(/\n\s+at /);

    // The replies were kept: pushed to a remote that answers, the assembly sends only the other share.
    const back = await startS3();
    const push = await one.run(["cache", "push"], remoteEnv(back));
    expect(push.exitCode, push.stderr).toBe(0);
    const two = clone(fake);
    expect((await two.buildAgainstFake(["--shard", "2/2"], remoteEnv(back))).exitCode).toBe(0);
    const assembler = clone(fake);
    const whole = await assembler.buildAgainstFake([], remoteEnv(back));
    expect(whole.exitCode, whole.stderr).toBe(0);
    const counts = [...fake.stats.bodies.values()];
    expect(counts.every((n) => n === 1)).toBe(true); // no request sent twice
    expect(fake.stats.requests).toBe(counts.length);
  });

  it("refuses a malformed --shard or MEDBENCH_REMOTE as a user mistake", async () => {
    const fake = await startFake();
    const p = clone(fake);
    for (const bad of ["0/4", "5/4", "2", "a/b"]) {
      const r = await p.buildAgainstFake(["--shard", bad]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/--shard/);
    }
    const r = await p.buildAgainstFake([], { MEDBENCH_REMOTE: "http://example/bucket" });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/MEDBENCH_REMOTE.*not an s3:\/\/BUCKET\/PREFIX address/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fake.stats.requests).toBe(0);
  });
});
