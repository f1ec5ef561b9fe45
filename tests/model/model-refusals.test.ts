// Refusals against real providers' reply shapes (scripts/provider-replies), served by the fake server over
// real HTTP to a build driven through the CLI: only a refusal of the format lowers an item's format; a
// refusal of the item (its length, a parameter) lowers nothing and is the item's final, counted outcome; a
// model the route does not have stops the route.
import { describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";
import { VOICE_SAMPLE_ITEMS } from "../support/helpers.js";

const { servers, projects } = cleanedAfterEach();

const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";

/** The fake with `server`'s options, and a project whose route `fake` sends to it. */
async function setup(server: Record<string, unknown>, concurrency = 4) {
  const fake: Fake = await startFake(server);
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  const route = fakeRoute("fake", fake.url).replace("concurrency: 8", `concurrency: ${concurrency}`);
  p.write("routes.yaml", `routes:\n${route}`);
  return { fake, p };
}

const metrics = (p: Project) => JSON.parse(p.read(`${RESULTS}/metrics.json`));
const replies = (p: Project) =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          id: string;
          error: string | null;
          format: string;
          text: string;
          request_sha256: string;
          request_refused?: { kind: string; status: number; message: string };
        },
    );
const formatsSent = (fake: Fake) => new Set(fake.stats.received.map((x) => x.body.response_format?.type));

describe("response format fallback", () => {
  it.each(["vllm-context-length", "openai-context-length", "openai-unsupported-parameter"])(
    "lowers no item's format on %s, however many items it hits",
    async (shape) => {
      const { fake, p } = await setup({ replay: { [shape]: 10 }, faultAttempts: 99 }, 1);
      const r = await p.buildAgainstFake();
      expect(r.exitCode, r.stderr).toBe(0); // complete: refused items are final, not failures
      expect(fake.stats.faults[`replay-${shape}`]).toBeGreaterThanOrEqual(3);
      expect(formatsSent(fake)).toEqual(new Set(["json_schema"]));
      expect(metrics(p).metrics.response_format).toEqual({ json_schema: VOICE_SAMPLE_ITEMS });
      expect(replies(p).every((x) => x.format === "json_schema")).toBe(true);
      expect(r.stderr).not.toMatch(/lower response format/);
    },
  );

  it.each([
    "vllm-schema-unsupported",
    "sglang-invalid-grammar",
    "ollama-schema-conversion-failed",
    "openai-response-format-unsupported",
  ])("falls back to JSON mode on %s", async (shape) => {
    const { fake, p } = await setup({ refuseSchema: shape }, 1);
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    // Two items needed the lower format; later ones start there.
    expect(fake.stats.faults["refuse-schema"]).toBe(2);
    expect(metrics(p).metrics.response_format).toEqual({ json_object: VOICE_SAMPLE_ITEMS });
  });
});

describe("a refusal of the item", () => {
  it("is final and counted: the run is complete, and only --refresh model sends it again", async () => {
    const { fake, p } = await setup({ replay: { "vllm-context-length": 10 }, faultAttempts: 99 });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    const refused = replies(p).filter((x) => x.request_refused);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    for (const x of refused) {
      expect(x.text).toBe("");
      expect(x.request_refused).toEqual({
        kind: "context_length",
        status: 400,
        message: expect.stringMatching(/^This model's maximum context length is 4096 tokens\. However/),
      });
      expect(x.error).toMatch(/^refused by the server \(context_length\): HTTP 400: This model's/);
    }
    const m = metrics(p);
    expect(m.incomplete).toBe(false);
    expect(m.metrics.api_errors).toBe(0);
    expect(m.metrics.refused).toEqual({ n: refused.length, by_kind: { context_length: refused.length } });
    // Never scored as the model's reply: those items have no verdict.
    const items = p
      .read(`${RESULTS}/items.jsonl`)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; verdicts: { api_error?: unknown } });
    const refusedIds = new Set(refused.map((x) => x.id));
    for (const it of items.filter((x) => refusedIds.has(x.id))) expect(it.verdicts.api_error).toBeTruthy();
    expect(r.stderr).toMatch(
      new RegExp(
        `the server refused ${refused.length} of ${VOICE_SAMPLE_ITEMS} requests ` +
          `\\(context length ${refused.length}\\): ` +
          "final, .*--refresh model sends every request again\\); the first: HTTP 400: " +
          "This model's maximum context length is 4096 tokens",
      ),
    );

    // A later build does not send them, even when the model stage runs again (its record gone).
    const sent = fake.stats.requests;
    expect((await p.buildAgainstFake()).exitCode).toBe(0);
    rmSync(p.path("cache/stages"), { recursive: true });
    const again = await p.buildAgainstFake();
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent);
    expect(metrics(p).metrics.refused.n).toBe(refused.length);
    expect(again.stderr).toMatch(/the server refused/);

    // --refresh model asks again: the refused requests are sent again.
    const keys = new Set(refused.map((x) => x.request_sha256));
    const refreshed = await p.buildAgainstFake(["--refresh", "model"]);
    expect(refreshed.exitCode, refreshed.stderr).toBe(0);
    expect(fake.stats.requests - sent).toBeGreaterThanOrEqual(keys.size);
  });

  it("a model the route does not have (404) stops the route, with the server's message", async () => {
    const { fake, p } = await setup({ replay: { "openai-model-not-found": 1 }, faultAttempts: 99 });
    p.edit("routes.yaml", (t) => t.replace("max_failures_in_a_row: 1000", "max_failures_in_a_row: 3"));
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /3 requests in a row failed \(the last: HTTP 404: .*test-model. does not exist/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fake.stats.requests).toBeLessThanOrEqual(3 + 4); // those in flight at most, besides
    expect(formatsSent(fake)).toEqual(new Set(["json_schema"])); // no other format tried
  });

  it.each([
    ["openrouter-invalid-model-400", /is not a valid model ID/],
    ["a 400 no wording explains", /HTTP 400: .*server error/],
  ])("%s is not final: it stops the route, and nothing is kept", async (shape, last) => {
    const known = shape.startsWith("openrouter");
    const options = known ? { replay: { [shape]: 1 } } : { policy: () => ({ http_error: 400 }) };
    const { fake, p } = await setup({ ...options, faultAttempts: 99 });
    p.edit("routes.yaml", (t) => t.replace("max_failures_in_a_row: 1000", "max_failures_in_a_row: 3"));
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/3 requests in a row failed/);
    expect(r.stderr).toMatch(last);
    const sent = fake.stats.requests;
    // Nothing was filed as a final refusal: the next build asks again.
    await p.buildAgainstFake();
    expect(fake.stats.requests).toBeGreaterThan(sent);
  });
});
