// Rate limits and transient statuses against the fake OpenAI-compatible server over real HTTP: the server's
// wait is read from retry-after-ms, Retry-After and OpenAI's x-ratelimit-reset-* headers (the corpus shapes
// of scripts/provider-replies), 409 is retried as openai-node retries it.
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { resolve } from "node:path";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { RESULTS, projectAgainstFake, resultMetrics as metrics } from "../support/fake-build.js";
import {
  bodyWaitMs,
  durationMs,
  quotaProblem,
  rateAdvice,
  retryAfterMs,
} from "../../src/model/rate-limit.js";

const cleaned = cleanedAfterEach();
const DIST = resolve(REPO, "dist");

const BASE = `concurrency: 4
timeout_s: 120
retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
max_failures_in_a_row: 1000`;

/** A route to the fake with quick retries; `fields`: route fields, one a line, replacing the base's. */
function registry(url: string, fields = ""): string {
  const lines = fields.split("\n").filter(Boolean);
  const given = new Set(lines.map((l) => l.split(":")[0]));
  const kept = BASE.split("\n").filter((l) => !given.has(l.split(":")[0]));
  return `routes:
  fake:
    base_url: ${url}
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
${[...kept, ...lines].map((l) => `    ${l}\n`).join("")}`;
}

const setup = (server: Record<string, unknown>, fields = "") =>
  projectAgainstFake(cleaned, server, (url) => registry(url, fields));

const errors = (p: Project) =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { error: string | null }).error)
    .filter((e) => e !== null);

describe("the server's wait", () => {
  it.each([
    ["retry-after-ms", { "retry-after-ms": "3600000" }],
    [
      "x-ratelimit-reset-requests",
      { "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1h0m0s" },
    ],
    [
      "x-ratelimit-reset-tokens",
      { "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "60m0s" },
    ],
  ])("is read from %s: a wait past the deadline fails at once", async (_name, headers) => {
    const { p } = await setup({ faults: { 429: 10 }, retryAfter: null, faultHeaders: headers });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: the limited requests failed
    const failed = errors(p);
    expect(failed.length).toBeGreaterThan(0);
    for (const e of failed) expect(e).toBe("HTTP 429 asking to wait 3600 s, beyond the request's deadline");
  });

  it.each(["openai-rate-limit-requests", "openai-rate-limit-tokens", "azure-rate-limit-retry-after-ms"])(
    "%s (provider corpus) is retried and never stored",
    async (name) => {
      // One body in 16 refused on its first try, whatever the rate (each 429 cuts the route's pace).
      const { fake, p } = await setup({ policy: "voice-command", replay: { [name]: 16 } });
      const r = await p.buildAgainstFake();
      expect(r.exitCode, r.stderr).toBe(0);
      expect(fake.stats.faults[`replay-${name}`]).toBeGreaterThan(0);
      expect(metrics(p).metrics.api_errors).toBe(0);
      expect(errors(p)).toEqual([]);
    },
  );
});

describe("409", () => {
  it("is retried, as openai-node retries it (a lock timeout)", async () => {
    const { fake, p } = await setup({ faults: { 409: 5 } });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults["409"]).toBeGreaterThan(0);
    expect(metrics(p).metrics.api_errors).toBe(0);
  });
});

describe("a rate-limited route", () => {
  // A bucket of 5 requests refilled at 50 a second; one try per request, so a 429 that spent a try would
  // lose its item.
  const BUCKET = { requestsPerMinute: 3000, burst: 5 };
  const ONE_TRY = "retry: { max_attempts: 1, base_ms: 1, max_ms: 5, max_total_s: 300 }";

  it("pauses and paces the route at the server's rate: all answered, few 429s, no try spent", async () => {
    const { fake, p } = await setup({ rateLimit: BUCKET }, `concurrency: 8\n${ONE_TRY}`);
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(metrics(p).metrics.api_errors).toBe(0);
    const limited = fake.stats.faults["rate-limit"] ?? 0;
    expect(limited).toBeGreaterThan(0); // the bucket ran out: the route met the limit
    // Paced after the first 429s (the route's concurrency in flight), a 429 is rare: far fewer than the
    // 138 requests the bucket cannot hold at once.
    expect(limited).toBeLessThanOrEqual(20);
  });

  it("never sends faster than its requests_per_minute", async () => {
    // The server allows 50 a second with a bucket of 20; the route declares half that rate: the bucket never
    // runs out, however the requests are timed on either side.
    const { fake, p } = await setup(
      { rateLimit: { requestsPerMinute: 3000, burst: 20 } },
      `concurrency: 8\nrequests_per_minute: 1500\n${ONE_TRY}`,
    );
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults["rate-limit"]).toBeUndefined();
    expect(metrics(p).metrics.api_errors).toBe(0);
  });

  it("refuses a requests_per_minute that is not above 0, at its place in the registry", async () => {
    const { fake, p } = await setup({}, "requests_per_minute: 0");
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/routes\.yaml:\d+:\d+: routes\.fake\.requests_per_minute: must be > 0/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fake.stats.requests).toBe(0);
  });
});

describe("OpenAI's insufficient_quota", () => {
  it("stops the route at once with a message about billing, not HTTP 429, and retries nothing", async () => {
    const { fake, p } = await setup(
      { replay: { "openai-insufficient-quota": 1 }, faultAttempts: 99 },
      "retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 5 }",
    );
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/out of quota \(HTTP 429 insufficient_quota: You exceeded your current quota/);
    expect(r.stderr).toMatch(/a billing problem, not a rate limit/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Stopped at the first answer: at most the requests already in flight were sent, each once, one format.
    expect(fake.stats.requests).toBeLessThanOrEqual(4);
    expect(Math.max(...fake.stats.bodies.values())).toBe(1);
    const formats = fake.stats.received.map((x) => x.body.response_format?.type);
    expect(new Set(formats)).toEqual(new Set(["json_schema"]));
  });
});

describe("retry jitter", () => {
  it("is drawn by each process for itself, so that shards do not retry in lockstep", async () => {
    const draw = `import(${JSON.stringify(`${DIST}/src/model/rate-limit.js`)}).then((m) =>
      console.log([1, 2, 3].map((n) => m.backoffMs({ base_ms: 1000, max_ms: 1e9 }, n)).join(" ")))`;
    const runs = await Promise.all([0, 1].map(() => execa("node", ["-e", draw])));
    const [a, b] = runs.map((x) => x.stdout.trim());
    expect(a).toMatch(/^[\d.]+ [\d.]+ [\d.]+$/);
    expect(a).not.toBe(b);
  });
});

describe("a wait in a 429's body, and billing stops", () => {
  it("reads OpenRouter's X-RateLimit-Reset under error.metadata.headers (epoch ms or s)", () => {
    const body = (reset: number) =>
      JSON.stringify({
        error: {
          code: 429,
          message: "Rate limit exceeded",
          metadata: { headers: { "X-RateLimit-Reset": String(reset) } },
        },
      });
    expect(bodyWaitMs(body(1_000_000_002_500), 1_000_000_000_000)).toBe(2500);
    expect(bodyWaitMs(body(1_000_000_003), 1_000_000_000_000)).toBe(3000);
    expect(bodyWaitMs('{"error":{"message":"Rate limit exceeded"}}')).toBeNull();
    expect(bodyWaitMs("not json")).toBeNull();
  });

  it("reads a 402 as a billing stop in the provider's words, and a 429 insufficient_quota", () => {
    const credits = '{"error":{"code":402,"message":"Insufficient credits. Add more using https://x"}}';
    expect(quotaProblem(402, credits)).toBe("HTTP 402: Insufficient credits. Add more using https://x");
    expect(quotaProblem(429, '{"error":{"code":"insufficient_quota","message":"No credit"}}')).toBe(
      "HTTP 429 insufficient_quota: No credit",
    );
    expect(quotaProblem(429, '{"error":{"code":"rate_limit_exceeded"}}')).toBeNull();
  });
});

describe("the server's wait in its other shapes", () => {
  it("reads Retry-After as an HTTP date, Groq's reset strings and OpenAI's token headers", () => {
    const now = Date.parse("Mon, 07 Dec 2026 01:00:00 GMT");
    expect(retryAfterMs({ "retry-after": "Mon, 07 Dec 2026 01:00:03 GMT" }, now)).toBe(3000);
    expect(retryAfterMs({ "retry-after-ms": "250", "retry-after": "9" }, now)).toBe(250);
    expect(durationMs("1m30.5s")).toBe(90_500);
    expect(durationMs("2m59.56s")).toBeCloseTo(179_560, 6);
    const tokens = rateAdvice(
      {
        "x-ratelimit-limit-tokens": "600000",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "1m0s",
      },
      1000,
      now,
    );
    expect(tokens.tokensPerMs).toBe(10); // 600,000 tokens back over a minute
    expect(tokens.waitMs).toBe(100); // this request's 1,000 tokens back
  });
});
