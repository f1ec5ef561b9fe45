// medbench cache status|push|pull|gc, driven through the CLI against s3rver and the fake OpenAI server on
// 127.0.0.1: what one machine pushes, a second pulls and builds with 0 model requests; gc keeps exactly what
// the recorded builds need (a frozen rebuild afterwards sends nothing and writes the same results).
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import type { Project } from "../support/rig.js";
import { age, filesUnder } from "../support/helpers.js";
import {
  cleanUp,
  clone,
  PREFIX,
  remoteEnv,
  results,
  startFake,
  startS3,
  type S3,
} from "../support/remote-rig.js";

afterEach(cleanUp);

type Counts = { objects: number; stages: number; replies: number; object_bytes: number };
type Status = {
  local: Counts;
  remote: null | (Counts & { reachable: boolean; not_on_remote: Counts; not_local: Counts });
};

async function status(p: Project, env: Record<string, string> = {}): Promise<Status> {
  const r = await p.run(["cache", "status", "--json"], env);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Status;
}

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);

/** A content object nobody refers to, written where the cache keeps objects. */
function plantObject(p: Project): string {
  const data = randomBytes(64);
  const hash = createHash("sha256").update(data).digest("hex");
  mkdirSync(p.path("cache/objects", hash.slice(0, 2)), { recursive: true });
  writeFileSync(p.path("cache/objects", hash.slice(0, 2), hash), data);
  return hash;
}

/** Removes the manifest of a locked stage, so that the next build runs it (reading the reply memo). */
function forgetStage(p: Project, stage: string): void {
  type Lock = {
    specs: Record<string, { builds: Record<string, { stages: Record<string, { key: string }> }> }>;
  };
  const lock = JSON.parse(p.read("medbench.lock")) as Lock;
  for (const spec of Object.values(lock.specs))
    for (const b of Object.values(spec.builds)) {
      const key = b.stages[stage]?.key;
      if (key) rmSync(p.path("cache/stages", `${key}.json`), { force: true });
    }
}

const remoteReplies = (s3: S3) => join(s3.dir, "medbench", PREFIX, "replies/requests");

describe("medbench cache push and pull", () => {
  it("moves a machine's cache to another via the remote; the second builds with 0 requests", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const env = remoteEnv(s3);
    const a = clone(fake);
    expect((await a.buildAgainstFake()).exitCode).toBe(0); // local only: nothing on the remote yet
    const sent = fake.stats.requests;
    expect(sent).toBeGreaterThan(0);

    const before = await status(a, env);
    expect(before.remote?.reachable).toBe(true);
    expect(before.local.replies).toBe(sent);
    expect(before.remote?.not_on_remote).toMatchObject({
      objects: before.local.objects,
      stages: before.local.stages,
      replies: sent,
    });
    const push = await a.run(["cache", "push"], env);
    expect(push.exitCode, push.stderr).toBe(0);
    expect(push.stdout).toContain(`${before.local.objects} objects`);
    const after = await status(a, env);
    expect(after.remote?.not_on_remote).toMatchObject({ objects: 0, stages: 0, replies: 0 });
    expect(after.remote).toMatchObject({ objects: before.local.objects, replies: sent });

    const b = clone(fake); // the second machine: an empty cache
    expect((await status(b, env)).remote?.not_local).toMatchObject({ objects: before.local.objects });
    const pull = await b.run(["cache", "pull"], env);
    expect(pull.exitCode, pull.stderr).toBe(0);
    const { dir: _b, ...here } = (await status(b)).local as Counts & { dir: string };
    const { dir: _a, ...there } = (await status(a)).local as Counts & { dir: string };
    expect(here).toEqual(there);
    expect((await b.run(["cache", "pull"], env)).stdout).toContain(
      "0 objects, 0 stage manifests, 0 replies",
    );

    // Without the remote: everything it needs is local now.
    const build = await b.build(["--model", "fake/test-model", "--registry", "routes.yaml"]);
    expect(fake.stats.requests).toBe(sent);
    expect(Object.values(build.status).every((s) => s === "fresh")).toBe(true);
    expect(results(b)).toEqual(results(a));
    expect(b.read("medbench.lock")).toBe(a.read("medbench.lock"));
  });

  it("refuses a damaged remote reply on pull and copies the rest", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const env = remoteEnv(s3);
    const a = clone(fake);
    expect((await a.buildAgainstFake([], env)).exitCode).toBe(0); // written through
    const sent = fake.stats.requests;
    const one = readdirSync(remoteReplies(s3)).find((f) => f.endsWith("._S3rver_object"))!;
    const file = join(remoteReplies(s3), one);
    const data = readFileSync(file);
    data[data.length - 3] = data[data.length - 3]! ^ 0x20;
    writeFileSync(file, data);

    const b = clone(fake);
    const pull = await b.run(["cache", "pull"], env);
    expect(pull.exitCode).toBe(1);
    expect(pull.stderr).toMatch(/is damaged .*refused/);
    expect(pull.stdout).toContain("1 damaged, refused");
    expect((await status(b)).local.replies).toBe(sent - 1);
    // The damaged reply is not used: a rerun of the model stage sends that request only.
    expect((await b.buildAgainstFake()).exitCode).toBe(0);
    expect(fake.stats.requests).toBe(sent);
    forgetStage(b, "model");
    const r = await b.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent + 1);
  });

  it("leaves only whole copies when a pull is killed, and a second pull completes it", async () => {
    const [s3, fake] = await Promise.all([startS3(), startFake()]);
    const env = remoteEnv(s3);
    const a = clone(fake);
    expect((await a.buildAgainstFake([], env)).exitCode).toBe(0);
    const sent = fake.stats.requests;
    const b = clone(fake);
    // The server answers 5 reply reads, then holds the rest: the pull cannot finish before it is killed.
    await s3.stall("/replies/", 5);
    const pull = b.start(["cache", "pull"], env);
    // Killed once the replies (copied last) have started to arrive.
    const memo = b.path("cache/memo/requests");
    while (!(existsSync(memo) && readdirSync(memo).some((f) => statSync(join(memo, f)).size > 0)))
      await new Promise((r) => setTimeout(r, 5));
    pull.kill("SIGKILL");
    expect((await pull).signal).toBe("SIGKILL");
    await s3.go();
    for (const f of filesUnder(b.path("cache/objects"))) {
      const name = f.split("/").pop()!;
      expect(createHash("sha256").update(readFileSync(f)).digest("hex")).toBe(name);
    }
    expect((await status(b)).local.replies).toBeLessThanOrEqual(5); // the stall held the rest
    expect(sent).toBeGreaterThan(5);
    const again = await b.run(["cache", "pull"], env);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((await status(b)).local.replies).toBe(sent);
    expect((await b.buildAgainstFake()).exitCode).toBe(0); // without the remote
    expect(fake.stats.requests).toBe(sent);
    expect(results(b)).toEqual(results(a));
  });

  it("says what is wrong when there is no remote or it cannot be reached", async () => {
    const fake = await startFake();
    const p = clone(fake);
    const none = await p.run(["cache", "push"]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/MEDBENCH_REMOTE is not set/);
    const s = await status(p);
    expect(s.remote).toBeNull();
    const gone = {
      MEDBENCH_REMOTE: "s3://medbench/x",
      MEDBENCH_REMOTE_ENDPOINT: "http://127.0.0.1:9", // nothing listens there
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER",
    };
    const pull = await p.run(["cache", "pull"], gone);
    expect(pull.exitCode).toBe(1);
    expect(pull.stderr).toMatch(/cannot list s3:\/\/medbench\/x; nothing was copied/);
    expect(pull.stderr).not.toMatch(/\n\s+at /);
    expect(pull.stderr).not.toContain("S3RVER");
    expect((await status(p, gone)).remote?.reachable).toBe(false);
    for (const bad of [["cache"], ["cache", "sweep"], ["cache", "push", "--dry-run"]]) {
      const r = await p.run(bad);
      expect(r.exitCode, bad.join(" ")).toBe(2);
    }
  });
});

const OTHER_MODEL_BUILD = [
  "build",
  "specs/voice-command.yaml",
  "--model",
  "fake/other-model",
  "--registry",
  "routes.yaml",
];

describe("medbench cache gc", () => {
  it("keeps what recorded builds need, removes the rest; a frozen rebuild sends 0 requests", async () => {
    const fake = await startFake();
    const p = clone(fake);
    expect((await p.buildAgainstFake()).exitCode).toBe(0);
    const sent = fake.stats.requests;
    const lock = p.read("medbench.lock");
    const kept = results(p);

    // Another model's build, then dropped from the lock (as a `git checkout medbench.lock` would) and its
    // results folder deleted: its objects, manifests and replies are referenced by nothing now.
    const other = await p.run(OTHER_MODEL_BUILD);
    expect(other.exitCode, other.stderr).toBe(0);
    const otherSent = fake.stats.requests - sent;
    expect(otherSent).toBeGreaterThan(0);
    p.write("medbench.lock", lock);
    rmSync(p.path("results/kor-surgical-robot-voice-command/fake_other-model"), { recursive: true });
    const planted = plantObject(p);
    age(p.path("cache"), hoursAgo(2)); // all written two hours ago
    const recent = plantObject(p); // written just now: kept by default

    const untouched = p.snapshot(["medbench.lock", "results"]);
    const cacheBefore = p.snapshot(["cache"]);
    const dry = await p.run(["cache", "gc", "--dry-run"]);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`object   ${planted}`);
    expect(dry.stdout).not.toContain(recent);
    expect(dry.stdout).toMatch(
      new RegExp(`would remove \\d+ objects, \\d+ stage manifests and ${otherSent} `),
    );
    expect(p.snapshot(["cache"])).toBe(cacheBefore);

    const gc = await p.run(["cache", "gc", "--json"]);
    expect(gc.exitCode, gc.stderr).toBe(0);
    const c = JSON.parse(gc.stdout) as {
      objects: { hash: string }[];
      stages: string[];
      replies: unknown[];
      kept: { replies: number };
    };
    expect(c.objects.map((o) => o.hash)).toContain(planted);
    expect(c.objects.map((o) => o.hash)).not.toContain(recent);
    expect(c.stages.length).toBeGreaterThan(0);
    expect(c.replies.length).toBe(otherSent);
    expect(c.kept.replies).toBe(sent);
    expect(p.exists(`cache/objects/${planted.slice(0, 2)}/${planted}`)).toBe(false);
    expect(p.exists(`cache/objects/${recent.slice(0, 2)}/${recent}`)).toBe(true);
    expect(p.snapshot(["medbench.lock", "results"])).toBe(untouched);
    const again = await p.run(["cache", "gc", "--json", "--keep-recent", "0"]);
    expect(JSON.parse(again.stdout).objects.map((o: { hash: string }) => o.hash)).toEqual([recent]);

    // What the lock records is all there: a frozen build is fresh throughout, sends nothing, same bytes.
    const frozen = await p.build(["--model", "fake/test-model", "--registry", "routes.yaml", "--frozen"]);
    expect(Object.values(frozen.status).every((s) => s === "fresh")).toBe(true);
    expect(fake.stats.requests).toBe(sent + otherSent);
    expect(results(p)).toEqual(kept);
    // The replies it kept are the ones the model stage reads: rerun, it still sends nothing.
    forgetStage(p, "model");
    expect((await p.buildAgainstFake(["--frozen"])).exitCode).toBe(0);
    expect(fake.stats.requests).toBe(sent + otherSent);
    // The dropped build's replies went: building it again sends its requests again.
    const rebuilt = await p.run(OTHER_MODEL_BUILD);
    expect(rebuilt.exitCode, rebuilt.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent + 2 * otherSent);
  });
});
