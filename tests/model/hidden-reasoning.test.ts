// Hidden reasoning: OpenAI's reasoning models and OpenRouter report reasoning only as a token count in usage
// (scripts/provider-replies: openai-reasoning-tokens, openrouter-reasoning-tokens). A build against the fake
// server replaying those shapes must keep the answers and count them as reasoning in the thinking audit, so
// that such a run never passes as a thinking-off reference.
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";
import { reasoningProblem } from "../../src/check/reasoning.js";
import type { MetricsJson } from "../../src/check/runs.js";

const { servers, projects } = cleanedAfterEach();
const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";

interface Reply {
  error: string | null;
  text: string;
  usage?: { completion_tokens_details?: { reasoning_tokens?: number } };
}

async function buildWithReplay(replay: Record<string, number>) {
  const fake = await startFake({ policy: "voice-command", replay });
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write("routes.yaml", `routes:\n${fakeRoute("fake", fake.url)}`);
  const r = await p.buildAgainstFake();
  expect(r.exitCode, r.stderr).toBe(0);
  const metrics = JSON.parse(p.read(`${RESULTS}/metrics.json`)) as {
    metrics: { thinking_audit: Record<string, unknown>; api_errors: number };
  };
  const replies = p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Reply);
  return { fake, metrics, replies };
}

const hiddenTokens = (r: Reply) => r.usage?.completion_tokens_details?.reasoning_tokens ?? 0;

describe("hidden reasoning counts in the thinking audit", () => {
  it("counts OpenAI replies with reasoning tokens and no reasoning text as reasoning", async () => {
    const { metrics, replies } = await buildWithReplay({ "openai-reasoning-tokens": 1 });
    const audit = metrics.metrics.thinking_audit;
    // Answers, kept and scored: no reasoning field, no think tag, only the count.
    expect(metrics.metrics.api_errors).toBe(0);
    expect(replies.every((r) => r.error === null && r.text.length > 0)).toBe(true);
    expect(audit.replies_with_reasoning_field).toBe(0);
    expect(audit.replies_with_think_block).toBe(0);
    expect(audit.replies_with_reasoning_tokens).toBe(replies.filter((r) => hiddenTokens(r) > 0).length);
    expect(audit.replies_with_reasoning_tokens).toBe(replies.length);
    expect(audit.thinking_off).toBe(false);
    // The roster check does not take it for a thinking-off run, and says why.
    const why = reasoningProblem("off", metrics as unknown as MetricsJson, "build it again");
    expect(why).toMatch(/reasoning-on: 0 replies with a reasoning field, 0 with a think tag and \d+ with/);
    expect(why).toContain(`${replies.length} with reasoning tokens in their usage (hidden reasoning)`);
  });

  it("counts OpenRouter's usage the same way, on the replies that report reasoning tokens", async () => {
    const { fake, metrics, replies } = await buildWithReplay({ "openrouter-reasoning-tokens": 3 });
    const audit = metrics.metrics.thinking_audit;
    const hidden = replies.filter((r) => hiddenTokens(r) > 0).length;
    expect(fake.stats.faults["replay-openrouter-reasoning-tokens"]).toBeGreaterThan(0);
    expect(hidden).toBeGreaterThan(0);
    expect(hidden).toBeLessThan(replies.length);
    expect(audit.replies_with_reasoning_tokens).toBe(hidden);
    expect(audit.thinking_off).toBe(false);
  });

  it("counts SGLang's count at the top level of usage", async () => {
    const { metrics, replies } = await buildWithReplay({ "sglang-reasoning-tokens": 1 });
    expect(replies.every((r) => r.error === null)).toBe(true);
    expect(metrics.metrics.thinking_audit).toMatchObject({
      replies_with_reasoning_field: 0,
      replies_with_reasoning_tokens: replies.length,
      thinking_off: false,
    });
  });

  it("a reported count of 0 is no reasoning, and the audit says the count was reported", async () => {
    const { metrics } = await buildWithReplay({ "openai-reasoning-tokens-zero": 1 });
    expect(metrics.metrics.thinking_audit).toEqual({
      replies_with_reasoning_field: 0,
      replies_with_think_block: 0,
      replies_with_reasoning_tokens: 0,
      thinking_off: true,
    });
    expect(reasoningProblem("off", metrics as unknown as MetricsJson, "build it again")).toBeNull();
  });
});
