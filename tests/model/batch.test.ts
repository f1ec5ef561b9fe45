// build --batch against the fake Batch API (scripts/fake-openai-batch.mjs) over real HTTP: its results equal
// an online build's byte for byte; without --wait it submits and exits 3, and a rerun collects without
// submitting again (after a kill too, on another clone through the shared remote: batch-durable.test.ts); a
// batch that fails, expires, is cancelled or answers some lines with errors leaves the rest to the next
// build.
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { Project, cleanedAfterEach, expectCleanFailure } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";
import { cleanUp, remoteEnv, startS3 } from "../support/remote-rig.js";
// @ts-expect-error: a plain ESM script
import { startFakeBatches } from "../../scripts/fake-openai-batch.mjs";

const { projects } = cleanedAfterEach();
const DIR = "results/kor-surgical-robot-voice-command/fake_test-model";

interface Batches {
  url: string;
  stats: { submitted: number; lines: number; polls: number; cancels: number };
  set(options: Record<string, unknown>): void;
  close(): Promise<void>;
}

function project(url: string): Project {
  const p = new Project();
  projects.push(p);
  p.write("routes.yaml", `routes:\n${fakeRoute("fake", url)}`);
  return p;
}

/** Every file of a results folder, by name. */
function resultFiles(p: Project): Map<string, string> {
  return new Map(readdirSync(p.path(DIR)).map((name) => [name, p.read(`${DIR}/${name}`)]));
}

describe("build --batch", () => {
  it("gives an online build's results byte for byte; without --wait it submits, then collects", async () => {
    const online = await startFake({ usage: "counted" });
    const port = online.port;
    const a = project(online.url);
    const built = await a.buildAgainstFake();
    expect(built.exitCode, built.stderr).toBe(0);
    await online.close();
    // The batch API on the same address: the same route, so the same request keys.
    const batches: Batches = await startFakeBatches({ port, usage: "counted" });
    try {
      const b = project(batches.url);
      const waited = await b.buildAgainstFake(["--batch", "--wait"]);
      expect(waited.exitCode, waited.stderr).toBe(0);
      expect(resultFiles(b)).toEqual(resultFiles(a));
      expect(batches.stats.submitted).toBe(1);

      const c = project(batches.url);
      const first = await c.buildAgainstFake(["--batch"]);
      expect(first.exitCode).toBe(3);
      expect(first.stderr).toMatch(/\d+ requests in 1 batches submitted; rerun to collect/);
      let rerun = first;
      for (let i = 0; i < 5 && rerun.exitCode === 3; i++) rerun = await c.buildAgainstFake(["--batch"]);
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      expect(batches.stats.submitted).toBe(2); // the rerun collected the batch it had made
      expect(resultFiles(c)).toEqual(resultFiles(a));
    } finally {
      await batches.close();
    }
  });

  it("an expired batch's answered half is kept; the rest go to the next build and are counted", async () => {
    const batches: Batches = await startFakeBatches({ lifecycle: "expired" });
    try {
      const p = project(batches.url);
      const expired = await p.buildAgainstFake(["--batch", "--wait"]);
      expect(expired.exitCode).toBe(1);
      const metrics = JSON.parse(p.read(`${DIR}/metrics.json`));
      const sent = batches.stats.lines;
      expect(metrics.metrics.api_errors).toBeGreaterThan(0);
      expect(expired.stderr).toContain("batch_");
      batches.set({ lifecycle: "completed" });
      const next = await p.buildAgainstFake(["--batch", "--wait"]);
      expect(next.exitCode, next.stderr).toBe(0);
      // Only the requests the expired batch did not answer were submitted again.
      expect(batches.stats.lines - sent).toBe(sent - Math.floor(sent / 2));
    } finally {
      await batches.close();
    }
  });
});

describe("cache batches and the shared remote", () => {
  afterEach(cleanUp);

  it("lists another machine's open batches from the remote, and cancels one", async () => {
    const s3 = await startS3();
    const batches: Batches = await startFakeBatches({ lifecycle: "cancelled" });
    try {
      const env = remoteEnv(s3);
      const first = project(batches.url);
      expect((await first.buildAgainstFake(["--batch"], env)).exitCode).toBe(3);
      const list = (p: Project) => p.run(["cache", "batches", "--registry", "routes.yaml", "--json"], env);
      const own = JSON.parse((await list(first)).stdout).batches;
      expect(own).toMatchObject([{ open: true, recorded: ["cache", "remote"] }]);
      const other = project(batches.url);
      const listed = await list(other);
      expect(listed.exitCode, listed.stderr).toBe(0);
      const open = JSON.parse(listed.stdout).batches;
      expect(open).toMatchObject([{ id: own[0].id, open: true, recorded: ["remote"] }]);
      const args = ["cache", "batches", "cancel", open[0].id, "--registry", "routes.yaml"];
      const cancel = await other.run(args, env);
      expect(cancel.exitCode, cancel.stderr).toBe(0);
      expect(batches.stats.cancels).toBe(1);
    } finally {
      await batches.close();
    }
  });
});

describe("the fake batch API's other lifecycles", () => {
  it.each([
    ["failed", (n: number) => n],
    ["cancelled", (n: number) => n - Math.floor(n / 2)],
    ["line-errors", (n: number) => Math.floor(n / 5)],
  ] as const)("%s: the requests it did not answer are errors, sent again next", async (lifecycle, left) => {
    const batches: Batches = await startFakeBatches({ lifecycle });
    try {
      const p = project(batches.url);
      if (lifecycle === "cancelled") {
        // Submitted and left running; cancelled by the command, then collected.
        expect((await p.buildAgainstFake(["--batch"])).exitCode).toBe(3);
        const listed = await p.run(["cache", "batches", "--registry", "routes.yaml", "--json"]);
        const open = JSON.parse(listed.stdout).batches.filter((x: { open: boolean }) => x.open);
        expect(open).toHaveLength(1);
        const cancel = await p.run(["cache", "batches", "cancel", open[0].id, "--registry", "routes.yaml"]);
        expect(cancel.exitCode, cancel.stderr).toBe(0);
      }
      const built = await p.buildAgainstFake(["--batch", "--wait"]);
      expect(built.exitCode).toBe(1);
      const sent = batches.stats.lines;
      // A failed batch's own reason (its errors) is each of its requests' error.
      if (lifecycle === "failed") expect(p.read(`${DIR}/replies.jsonl`)).toContain("invalid_json_line");
      const metrics = JSON.parse(p.read(`${DIR}/metrics.json`));
      // Items of one body share a request: the errors count items, at least one per request left.
      expect(metrics.metrics.api_errors).toBeGreaterThanOrEqual(left(sent));
      batches.set({ lifecycle: "completed" });
      const next = await p.buildAgainstFake(["--batch", "--wait"]);
      expect(next.exitCode, next.stderr).toBe(0);
      expect(batches.stats.lines - sent).toBe(left(sent));
    } finally {
      await batches.close();
    }
  });
});

describe("a batch API that cannot be reached", () => {
  it("fails the stage with the route named and no stack trace", async () => {
    const gone: Batches = await startFakeBatches();
    await gone.close();
    const p = project(gone.url);
    const r = await p.buildAgainstFake(["--batch"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("route fake");
    expect(r.stderr).toContain("its batch API failed");
    expectCleanFailure(r.stderr);
  });
});
