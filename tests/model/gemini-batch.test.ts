// Gemini's Batch API through medbench's client (src/model/gemini-batch.ts) against the fake Gemini server's
// (scripts/fake-gemini-batch.mjs) over real HTTP: the lifecycle PENDING -> RUNNING -> SUCCEEDED with each
// request's inline response or error read by its key, a failed batch, a cancel, a batch found by its display
// name, the split under the 20 MB of inlined requests; and build --batch on a Gemini route: the results of
// an online build byte for byte, submitted then collected by a rerun, and the requests a batch did not
// answer (line errors, expired) sent again by the next build, they alone.
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { BatchHttp } from "../../src/model/batch-api.js";
import { GeminiBatches, GEMINI_BATCH_LIMITS } from "../../src/model/gemini-batch.js";
import { splitBatches } from "../../stages/model-batch.js";
import type { Route } from "../../src/model/registry.js";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { geminiRoute, startGeminiFake, type GeminiFake } from "../support/fake-gemini.js";

const KEY = "gm-test-key-0123456789";
const MODEL = "gemini-2.5-flash";
const DIR = "results/kor-surgical-robot-voice-command/gm_gemini-2.5-flash";
const { projects } = cleanedAfterEach();
const fakes: GeminiFake[] = [];
afterEach(async () => {
  while (fakes.length) await fakes.pop()!.close();
});

interface BatchStats {
  submitted: number;
  requests: number;
  cancels: number;
  largest: number;
}
const batchStats = (fake: GeminiFake) => (fake.stats as unknown as { batches: BatchStats }).batches;

async function start(options: Record<string, unknown> = {}): Promise<GeminiFake> {
  const fake = await startGeminiFake({ apiKey: KEY, ...options });
  fakes.push(fake);
  return fake;
}

const client = (url: string, key = KEY) =>
  new GeminiBatches(
    new BatchHttp(
      { name: "gm", base_url: url, headers: {} } as unknown as Route,
      { "x-goog-api-key": key },
      [key],
    ),
    MODEL,
  );
const body = (text: string) =>
  Buffer.from(
    JSON.stringify({
      contents: [{ parts: [{ text }], role: "user" }],
      generationConfig: { thinkingConfig: { thinkingBudget: 0 } },
    }),
  );
const keys = ["a", "b", "c", "d", "e"].map((x) => x.repeat(64));
const entries = (api: GeminiBatches) => keys.map((key, i) => api.entry(key, body(`q${i}`)));

describe("Gemini's Batch API", () => {
  it("submits inlined requests, reads PENDING, RUNNING, SUCCEEDED and each response by key", async () => {
    const fake = await start({ batchLifecycle: "line-errors", batchErrorPeriod: 5 });
    const api = client(fake.url);
    const id = await api.submit(entries(api), "medbench-one");
    expect(id).toMatch(/^batches\//);
    expect(batchStats(fake).requests).toBe(5);
    const states = [await api.state(id), await api.state(id), await api.state(id)];
    expect(states.map((x) => [x.status, x.done])).toEqual([
      ["JOB_STATE_RUNNING", false],
      ["JOB_STATE_SUCCEEDED", true],
      ["JOB_STATE_SUCCEEDED", true],
    ]);
    const lines = await api.results(states[2]!);
    expect(lines.map((line) => line.custom_id)).toEqual(keys);
    expect(lines[0]!.body).toMatchObject({ candidates: [{ finishReason: "STOP" }], modelVersion: MODEL });
    expect(lines[4]).toMatchObject({ body: null, error: expect.stringContaining("INVALID_ARGUMENT") });
    expect(await api.find({ tag: "medbench-one", at: "", keys }, new Set())).toBe(id);
    expect(await api.find({ tag: "medbench-one", at: "", keys }, new Set([id]))).toBeNull();
    expect(await api.find({ tag: "medbench-two", at: "", keys }, new Set())).toBeNull();
  });

  it("a failed batch and a cancelled one end with no response", async () => {
    const fake = await start({ batchLifecycle: "failed" });
    const api = client(fake.url);
    const failed = await api.submit(entries(api), "medbench-failed");
    await api.state(failed);
    const ended = await api.state(failed);
    expect(ended).toMatchObject({
      status: "JOB_STATE_FAILED",
      done: true,
      error: "INVALID_ARGUMENT: The batch's input could not be read.",
    });
    expect(await api.results(ended)).toEqual([]);
    fake.set({ batchLifecycle: "cancelled" });
    const running = await api.submit(entries(api), "medbench-cancelled");
    expect((await api.state(running)).done).toBe(false);
    await api.cancel(running);
    expect(batchStats(fake).cancels).toBe(1);
    const cancelled = await api.state(running);
    expect(cancelled).toMatchObject({ status: "JOB_STATE_CANCELLED", done: true });
  });

  it("a refused key is an error that does not echo it", async () => {
    const fake = await start();
    const api = client(fake.url, "gm-wrong-key-000000");
    const failed = await api.submit(entries(api), "medbench-x").catch((e: Error) => e.message);
    expect(failed).toMatch(/HTTP 400/);
    expect(failed).not.toContain("gm-wrong-key-000000");
  });

  it("splits requests over 20 MB into batches each under it", async () => {
    const fake = await start();
    const api = client(fake.url);
    const big = "x".repeat(1_500_000);
    const lines = Array.from({ length: 20 }, (_, i) => ({ line: api.entry(keys[i % 5]!, body(big + i)) }));
    const chunks = splitBatches(lines, api.limits);
    expect(chunks.map((x) => x.length)).toEqual([13, 7]);
    for (const chunk of chunks)
      await api.submit(
        chunk.map((x) => x.line),
        "medbench-big",
      );
    expect(batchStats(fake).submitted).toBe(2);
    expect(batchStats(fake).largest).toBeLessThanOrEqual(20_000_000);
    expect(batchStats(fake).largest).toBeGreaterThan(GEMINI_BATCH_LIMITS.bytes - 1_600_000);
  });
});

/** A project whose route `gm` is the fake Gemini server. */
function project(url: string): Project {
  const p = new Project();
  projects.push(p);
  p.write("routes.yaml", `routes:\n${geminiRoute("gm", url)}`);
  return p;
}
const build = (p: Project, extra: string[] = []) =>
  p.run(
    ["build", "specs/voice-command.yaml", "--model", `gm/${MODEL}`, "--registry", "routes.yaml", ...extra],
    { GEMINI_API_KEY: KEY },
  );
const resultFiles = (p: Project) =>
  new Map(readdirSync(p.path(DIR)).map((name) => [name, p.read(`${DIR}/${name}`)]));

describe("build --batch on a Gemini route", () => {
  it("gives an online build's results byte for byte; without --wait it submits, then collects", async () => {
    const fake = await start();
    const online = project(fake.url);
    const built = await build(online);
    expect(built.exitCode, built.stderr).toBe(0);
    const sent = fake.stats.replies;
    expect(sent).toBeGreaterThan(0);

    const waited = project(fake.url);
    const run = await build(waited, ["--batch", "--wait"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(batchStats(fake).submitted).toBe(1);
    expect(batchStats(fake).requests).toBe(sent);
    expect(fake.stats.replies).toBe(sent); // nothing sent online
    expect(resultFiles(waited)).toEqual(resultFiles(online));

    const later = project(fake.url);
    const first = await build(later, ["--batch"]);
    expect(first.exitCode).toBe(3);
    expect(first.stderr).toMatch(/\d+ requests in 1 batches submitted; rerun to collect/);
    let rerun = first;
    for (let i = 0; i < 5 && rerun.exitCode === 3; i++) rerun = await build(later, ["--batch"]);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(batchStats(fake).submitted).toBe(2);
    expect(resultFiles(later)).toEqual(resultFiles(online));
  });

  it.each(["line-errors", "expired", "cancelled"])(
    "%s: the requests it did not answer are errors, submitted again by the next build alone",
    async (lifecycle) => {
      const fake = await start({ batchLifecycle: lifecycle, batchErrorPeriod: 5 });
      const p = project(fake.url);
      if (lifecycle === "cancelled") {
        // Submitted and left running; cancelled by the command (its id names a resource: batches/ID).
        expect((await build(p, ["--batch"])).exitCode).toBe(3);
        const listed = await p.run(["cache", "batches", "--registry", "routes.yaml", "--json"]);
        const [open] = JSON.parse(listed.stdout).batches;
        expect(open).toMatchObject({ id: expect.stringMatching(/^batches\//), open: true });
        const cancel = await p.run(["cache", "batches", "cancel", open.id, "--registry", "routes.yaml"], {
          GEMINI_API_KEY: KEY,
        });
        expect(cancel.exitCode, cancel.stderr).toBe(0);
        expect(batchStats(fake).cancels).toBe(1);
      }
      const first = await build(p, ["--batch", "--wait"]);
      expect(first.exitCode).toBe(1);
      const sent = batchStats(fake).requests;
      const metrics = JSON.parse(p.read(`${DIR}/metrics.json`));
      expect(metrics.metrics.api_errors).toBeGreaterThan(0);
      fake.set({ batchLifecycle: "succeeded" });
      const next = await build(p, ["--batch", "--wait"]);
      expect(next.exitCode, next.stderr).toBe(0);
      const left = lifecycle === "line-errors" ? Math.floor(sent / 5) : sent;
      expect(batchStats(fake).requests - sent).toBe(left);
    },
  );
});
