// Anthropic's Message Batches through medbench's client (src/model/anthropic-batch.ts) against the fake
// (scripts/fake-anthropic-batch.mjs) over real HTTP: the lifecycle in_progress -> ended with each documented
// result type read as an answer or as why there is none, a cancel (canceling -> ended, the cancelled
// requests' results), a refused key never echoed, the split at the provider's limits; and a build --batch of
// an Anthropic route whose results are an online build's byte for byte.
import { afterEach, describe, expect, it } from "vitest";
import { BatchHttp } from "../../src/model/batch-api.js";
import { AnthropicBatches, ANTHROPIC_BATCH_LIMITS } from "../../src/model/anthropic-batch.js";
import { splitBatches } from "../../stages/model-batch.js";
import type { Route } from "../../src/model/registry.js";
import { readdirSync } from "node:fs";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { anthropicRoute, startAnthropicFake } from "../support/fake-anthropic.js";
// @ts-expect-error: a plain ESM script
import { startFakeAnthropicBatches } from "../../scripts/fake-anthropic-batch.mjs";

interface Fake {
  url: string;
  stats: { submitted: number; requests: number; cancels: number };
  close(): Promise<void>;
}
const { projects } = cleanedAfterEach();
const fakes: Fake[] = [];
afterEach(async () => {
  while (fakes.length) await fakes.pop()!.close();
});

const KEY = "sk-ant-test";
const route = (url: string) => ({ name: "claude", base_url: url, headers: {} }) as unknown as Route;
const client = (url: string, key = KEY) =>
  new AnthropicBatches(
    new BatchHttp(route(url), { "x-api-key": key, "anthropic-version": "2023-06-01" }, [key]),
  );
const params = (i: number) =>
  Buffer.from(
    JSON.stringify({ model: "claude-x", max_tokens: 16, messages: [{ role: "user", content: `q${i}` }] }),
  );
const keys = ["a", "b", "c", "d"].map((x) => x.repeat(64));

async function start(options: Record<string, unknown> = {}): Promise<Fake> {
  const fake = (await startFakeAnthropicBatches(options)) as Fake;
  fakes.push(fake);
  return fake;
}

describe("Anthropic's Message Batches", () => {
  it("submits, reads in_progress then ended, and reads each result type", async () => {
    const types = ["succeeded", "errored", "expired", "succeeded"];
    const fake = await start({ outcome: (i: number) => types[i] });
    const api = client(fake.url);
    const id = await api.submit(
      keys.map((key, i) => api.entry(key, params(i))),
      "medbench-t",
    );
    expect(fake.stats.requests).toBe(4);
    const first = await api.state(id);
    expect(first).toMatchObject({ status: "in_progress", done: false, results: [] });
    const ended = await api.state(id);
    expect(ended.done).toBe(true);
    const lines = await api.results(ended);
    expect(lines.map((line) => line.custom_id)).toEqual(keys);
    expect(lines[0]!.body).toMatchObject({ type: "message", content: [{ type: "text", text: "reply 0" }] });
    expect(lines[1]).toMatchObject({ body: null, error: expect.stringContaining("invalid_request_error") });
    expect(lines[2]).toMatchObject({ body: null, error: "expired" });
    expect(lines[3]!.error).toBeNull();
  });

  it("cancels: canceling, then ended with the cancelled requests' results", async () => {
    const fake = await start();
    const api = client(fake.url);
    const id = await api.submit(
      keys.map((key, i) => api.entry(key, params(i))),
      "medbench-t",
    );
    await api.cancel(id);
    expect(fake.stats.cancels).toBe(1);
    expect((await api.state(id)).status).toBe("canceling");
    const ended = await api.state(id);
    const lines = await api.results(ended);
    expect(lines.filter((line) => line.error === "canceled")).toHaveLength(2);
    expect(lines.filter((line) => line.body !== null)).toHaveLength(2);
  });

  it("a refused key is an error that does not echo it", async () => {
    const fake = await start({ apiKey: "sk-ant-other" });
    const api = client(fake.url);
    const failed = await api
      .submit([api.entry(keys[0]!, params(0))], "medbench-t")
      .catch((e: Error) => e.message);
    expect(failed).toMatch(/HTTP 401/);
    expect(failed).not.toContain(KEY);
  });

  it("splits a set at the request limit and at the byte limit", async () => {
    const api = client("http://127.0.0.1:9");
    const lines = Array.from({ length: 5 }, (_, i) => ({ line: api.entry(keys[i % 4]!, params(i)) }));
    expect(
      splitBatches(lines, { requests: 2, bytes: ANTHROPIC_BATCH_LIMITS.bytes }).map((x) => x.length),
    ).toEqual([2, 2, 1]);
    const twoFit = lines[0]!.line.length * 2 + 1;
    expect(splitBatches(lines, { requests: 100, bytes: twoFit }).map((x) => x.length)).toEqual([2, 2, 1]);
    expect(ANTHROPIC_BATCH_LIMITS).toEqual({ requests: 100_000, bytes: 256_000_000 });
  });
});

describe("build --batch on an Anthropic route", () => {
  it("gives the results of an online build of the same answers, byte for byte", async () => {
    const key = "sk-ant-test-0123456789";
    const online = await startAnthropicFake({ policy: "voice-command", apiKey: key });
    const build = async (url: string, extra: string[]) => {
      const p = new Project();
      projects.push(p);
      p.write("routes.yaml", `routes:\n${anthropicRoute("an", url)}`);
      const args = [
        "build",
        "specs/voice-command.yaml",
        "--model",
        "an/claude-test",
        "--registry",
        "routes.yaml",
      ];
      const run = await p.run([...args, ...extra], { ANTHROPIC_API_KEY: key });
      expect(run.exitCode, run.stderr).toBe(0);
      return p;
    };
    const a = await build(online.url, []);
    await online.close();
    const batches = await start({ port: online.port, policy: "voice-command", apiKey: key });
    const b = await build(batches.url, ["--batch", "--wait"]);
    expect(batches.stats.submitted).toBe(1);
    const dir = "results/kor-surgical-robot-voice-command/an_claude-test";
    const files = (p: Project) => new Map(readdirSync(p.path(dir)).map((f) => [f, p.read(`${dir}/${f}`)]));
    expect(files(b)).toEqual(files(a));
  });
});
