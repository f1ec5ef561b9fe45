// Providers' own words for "no", each served over real HTTP from its public description
// (scripts/provider-replies names the source of each): a context length in llama.cpp's and TGI's words and
// Azure's prompt filter are final refusals of the item, counted; OpenRouter's 402 stops the route at once in
// its words; a wait given only in a 429's body is read; a run whose every request was refused for a
// parameter is not complete; a tokens_per_minute no request fits and a zero deadline are refused up front.
import { describe, expect, it } from "vitest";
import { cleanedAfterEach } from "../support/rig.js";
import { fakeRoute } from "../support/fake.js";
import { projectAgainstFake, resultMetrics as metrics, resultRecords } from "../support/fake-build.js";

const cleaned = cleanedAfterEach();

/** The fake route with `extra` route fields (one a line), each replacing the entry's line of that key. */
const routeWith = (extra: string) => (url: string) => {
  const lines = extra.split("\n").filter(Boolean);
  const keys = new Set(lines.map((l) => l.split(":")[0]));
  const kept = fakeRoute("fake", url)
    .split("\n")
    .filter((l) => !keys.has(l.trim().split(":")[0]!) || !/^ {4}\S/.test(l));
  return `routes:\n${kept.join("\n")}${lines.map((l) => `    ${l}\n`).join("")}`;
};
const setup = (server: Record<string, unknown>, extra = "") =>
  projectAgainstFake(cleaned, server, routeWith(extra));

interface Reply {
  error: string | null;
  request_refused?: { kind: string; status: number; message: string };
}

describe("a refusal for good, in the provider's words", () => {
  it.each([
    ["llamacpp-context-size", "context_length"],
    ["tgi-context-length", "context_length"],
    ["azure-prompt-filter", "filtered"],
  ])("%s: final, counted as %s, not sent again", async (name, kind) => {
    const { fake, p } = await setup({ replay: { [name]: 5 }, faultAttempts: 99 });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    const refused = resultRecords<Reply>(p, "replies.jsonl").filter((x) => x.request_refused);
    // Each refused body once (identical bodies of two subsets share one request).
    const served = fake.stats.faults[`replay-${name}`]!;
    expect(served).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThanOrEqual(served);
    for (const x of refused) expect(x.request_refused!.kind).toBe(kind);
    const m = metrics(p).metrics;
    expect(m.api_errors).toBe(0);
    if (kind === "filtered") expect(m.reply_audit.content_filtered).toBe(refused.length);
    const sent = fake.stats.requests;
    const again = await p.buildAgainstFake();
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent); // final: the next build sends none of them
  });
});

describe("a billing stop", () => {
  it("OpenRouter's 402 stops the route at the first, in its words, and retries nothing", async () => {
    const { fake, p } = await setup(
      { replay: { "openrouter-insufficient-credits": 1 }, faultAttempts: 99 },
      "concurrency: 1",
    );
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/out of quota \(HTTP 402: Insufficient credits\. Add more using/);
    expect(r.stderr).toMatch(/a billing problem, not a rate limit/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fake.stats.requests).toBe(1);
  });
});

describe("a wait given only in a 429's body", () => {
  it("OpenRouter's error.metadata.headers.X-RateLimit-Reset: waited, retried, never stored", async () => {
    const name = "openrouter-rate-limit-reset-in-body";
    const { fake, p } = await setup(
      { replay: { [name]: 16 } },
      "retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }",
    );
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults[`replay-${name}`]).toBeGreaterThan(0);
    expect(metrics(p).metrics.api_errors).toBe(0);
    // Each limited request went again no sooner than the reset the body gave (1 s after the 429).
    const received = fake.stats.received;
    for (const [i, x] of received.entries()) {
      if (x.fault !== `replay-${name}`) continue;
      const same = JSON.stringify(x.body);
      const retry = received.slice(i + 1).find((y) => JSON.stringify(y.body) === same);
      expect(retry!.at - x.at).toBeGreaterThanOrEqual(900);
    }
  });
});

describe("a run whose every request was refused for a parameter", () => {
  it("is not complete: exit 1, and says so", async () => {
    const { p } = await setup({ replay: { "openai-unsupported-parameter": 1 }, faultAttempts: 99 });
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/refused every request \(\d+\) for a parameter: no item has a verdict/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("limits no request can meet, refused up front", () => {
  it("a tokens_per_minute below one request's estimate: a fix, and nothing sent", async () => {
    const { fake, p } = await setup({}, "tokens_per_minute: 100");
    const r = await p.buildAgainstFake();
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/tokens_per_minute is 100, but a request is estimated at \d+ tokens/);
    expect(r.stderr).toMatch(/raise tokens_per_minute in route fake/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fake.stats.requests).toBe(0);
  });

  it("retry.max_total_s: 0 is refused at its place in the registry", async () => {
    const { fake, p } = await setup({}, "retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 0 }");
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/routes\.yaml:\d+:\d+: routes\.fake\.retry\.max_total_s: must be > 0/);
    expect(fake.stats.requests).toBe(0);
  });
});
