// Every reply and error shape of the Anthropic corpus (scripts/provider-replies/anthropic, each with its
// public source) served over real HTTP by the fake Anthropic server to a voice-command build, and taken as
// the entry's `expect` says: an answer stored and counted, a failed try sent again, a final refusal of the
// item kept and not re-sent, a refusal of the route that stops it with the provider's words.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { anthropicRoute, startAnthropicFake, type AnthropicFake } from "../support/fake-anthropic.js";
// @ts-expect-error: a plain ES module of the scripts, without types
import { loadReplies } from "../../scripts/provider-replies/index.mjs";

interface Entry {
  expect: "answer" | "retry" | "refused-item" | "refused-route";
  body: { error?: { message: string } };
}
const CORPUS = loadReplies(join(REPO, "scripts/provider-replies/anthropic")) as Record<string, Entry>;
const KEY = "sk-ant-test-errors";
const LIMIT = 4; // items of each subset (voice-command has several)
const RESULTS = "results/kor-surgical-robot-voice-command/an_claude-sonnet-4-5.partial";

const { servers, projects } = cleanedAfterEach();

/** A build of LIMIT items against a fake that serves entry `name`; `oneByOne`: one request at a time, and
 *  the route stopped after two failures in a row. */
async function buildWith(name: string, oneByOne = false) {
  const entry = CORPUS[name]!;
  const fake: AnthropicFake = await startAnthropicFake({
    apiKey: KEY,
    replay: { [name]: 1 },
    // A final refusal is the server's answer every time; anything else is served once.
    faultAttempts: entry.expect === "refused-item" ? 99 : 1,
  });
  servers.push(fake as never);
  const p = new Project();
  projects.push(p);
  let route = anthropicRoute("an", fake.url);
  if (oneByOne)
    route = route.replace("concurrency: 8", "concurrency: 1").replace("in_a_row: 1000", "in_a_row: 2");
  p.write("routes.yaml", `routes:\n${route}`);
  const args = [
    "build",
    "specs/voice-command.yaml",
    "--model",
    "an/claude-sonnet-4-5",
    "--limit",
    String(LIMIT),
  ];
  const run = () => p.run([...args, "--registry", "routes.yaml", "--json"], { ANTHROPIC_API_KEY: KEY });
  return { fake, p, run, entry };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- results files, read field by field
const replies = (p: Project): any[] =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- metrics.json, read field by field
const metrics = (p: Project): any => JSON.parse(p.read(`${RESULTS}/metrics.json`)).metrics;

describe("Anthropic's replies and errors, each as its entry says", () => {
  it("has entries of every kind", () => {
    const kinds = new Set(Object.values(CORPUS).map((entry) => entry.expect));
    expect([...kinds].sort()).toEqual(["answer", "refused-item", "refused-route", "retry"]);
  });

  const named = (kind: Entry["expect"]) =>
    Object.keys(CORPUS).filter((name) => CORPUS[name]!.expect === kind);

  it.each(named("retry"))("%s: a failed try, sent again and answered", async (name) => {
    const { fake, p, run } = await buildWith(name);
    const r = await run();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults[`replay-${name}`]).toBeGreaterThan(0);
    const got = replies(p);
    expect(got.length).toBeGreaterThanOrEqual(LIMIT);
    expect(got.every((reply) => reply.error === null && reply.text.length > 0)).toBe(true);
  });

  it.each(named("refused-item"))("%s: the item's final refusal, kept and not sent again", async (name) => {
    const { fake, p, run } = await buildWith(name);
    const r = await run();
    expect(r.exitCode, r.stderr).toBe(0); // complete: refused items are final, not failures
    const got = replies(p);
    expect(got.length).toBeGreaterThanOrEqual(LIMIT);
    expect(got.map((reply) => reply.request_refused?.kind)).toEqual(got.map(() => "context_length"));
    const sent = fake.stats.requests;
    expect((await run()).exitCode).toBe(0);
    expect(fake.stats.requests).toBe(sent);
  });

  it.each(named("refused-route"))("%s: the route stops, in the provider's words", async (name) => {
    const { fake, run, entry } = await buildWith(name, true);
    const r = await run();
    expect(r.exitCode).toBe(1);
    const words = entry.body.error!.message.replace("{{model}}", "claude-sonnet-4-5").slice(0, 40);
    expect(r.stdout + r.stderr).toContain(words);
    // A spend limit stops at its first refusal; a refused model after max_failures_in_a_row.
    expect(fake.stats.requests).toBe(name === "model-not-found" ? 2 : 1);
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it("refusal: stored, scored as no answer, counted in reply_audit.refusals", async () => {
    const { p, run } = await buildWith("refusal");
    expect((await run()).exitCode).toBe(0);
    const got = replies(p);
    expect(got.every((reply) => reply.refusal?.includes("refusal") && reply.text === "")).toBe(true);
    expect(metrics(p).reply_audit.refusals).toBe(got.length);
  });

  it("max-tokens: a truncated answer, kept and counted", async () => {
    const { p, run } = await buildWith("max-tokens");
    expect((await run()).exitCode).toBe(0);
    expect(replies(p).every((reply) => reply.finish_reason === "length")).toBe(true);
    expect(metrics(p).truncated).toBe(replies(p).length);
  });

  it("thinking: the block and its tokens in the thinking audit, cache tokens in the totals", async () => {
    const { p, run } = await buildWith("thinking");
    expect((await run()).exitCode).toBe(0);
    const got = replies(p);
    expect(got.every((reply) => reply.reasoning && reply.reasoning_tokens === 55)).toBe(true);
    const audit = metrics(p).thinking_audit;
    expect(audit).toMatchObject({
      replies_with_reasoning_field: got.length,
      replies_with_reasoning_tokens: got.length,
    });
    expect(audit.thinking_off).toBe(false);
  });
});

describe("the shipped anthropic route", () => {
  it("sends to ANTHROPIC_BASE_URL with the key of ANTHROPIC_API_KEY, as Anthropic's SDKs do", async () => {
    const fake: AnthropicFake = await startAnthropicFake({ apiKey: KEY });
    servers.push(fake as never);
    const p = new Project();
    projects.push(p);
    const args = [
      "build",
      "specs/voice-command.yaml",
      "--model",
      "anthropic/claude-sonnet-4-5",
      "--limit",
      "2",
    ];
    const r = await p.run([...args, "--json"], { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.requests).toBeGreaterThan(0);
    expect(fake.stats.received.every((request) => request.url === "/v1/messages")).toBe(true);
    expect(fake.stats.received.every((request) => request.apiKey === KEY)).toBe(true);
    const got = p.read(
      "results/kor-surgical-robot-voice-command/anthropic_claude-sonnet-4-5.partial/replies.jsonl",
    );
    expect(got).not.toContain(KEY);
  });
});
