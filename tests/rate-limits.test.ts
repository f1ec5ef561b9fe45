// Rate limits and transient statuses against the fake OpenAI-compatible server over real HTTP: the server's
// wait is read from retry-after-ms, Retry-After and OpenAI's x-ratelimit-reset-* headers (the corpus shapes
// of scripts/provider-replies), 409 is retried as openai-node retries it.
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach } from "./rig.js";
import { startFake, type Fake } from "./fake.js";

const { servers, projects } = cleanedAfterEach();

const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";

/** A route to the fake with quick retries; `fields`: more route fields, one per line. */
function registry(url: string, fields = ""): string {
  const more = fields
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => `    ${l}\n`)
    .join("");
  return `routes:
  fake:
    base_url: ${url}
    concurrency: 4
    timeout_s: 120
    retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
${more}`;
}

async function setup(server: Record<string, unknown>, fields = "") {
  const fake: Fake = await startFake(server);
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write("routes.yaml", registry(fake.url, fields));
  return { fake, p };
}

const metrics = (p: Project) => JSON.parse(p.read(`${RESULTS}/metrics.json`));
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
      const { fake, p } = await setup({ policy: "voice-command", replay: { [name]: 4 } });
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
