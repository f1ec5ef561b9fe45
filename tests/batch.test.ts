// build --batch against the fake Batch API (scripts/fake-openai-batch.mjs) over real HTTP: its results equal
// an online build's byte for byte; without --wait it submits and exits 3, and a rerun collects without
// submitting again; a batch that expires with part of its output leaves the rest to the next build.
import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { Project, cleanedAfterEach } from "./rig.js";
import { fakeRoute, startFake } from "./fake.js";
// @ts-expect-error: a plain ESM script
import { startFakeBatches } from "../scripts/fake-openai-batch.mjs";

const { projects } = cleanedAfterEach();
const DIR = "results/kor-surgical-robot-voice-command/fake_test-model";

interface Batches {
  url: string;
  stats: { submitted: number; lines: number; polls: number };
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
