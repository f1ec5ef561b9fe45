// Refusals against real providers' reply shapes (scripts/provider-replies), served by the fake server over
// real HTTP to a build driven through the CLI: only a refusal of the format lowers an item's format; a
// refusal of the item (its length, a parameter) lowers nothing.
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach } from "./rig.js";
import { startFake, type Fake } from "./fake.js";

const { servers, projects } = cleanedAfterEach();

const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";

async function setup(server: Record<string, unknown>, concurrency = 4) {
  const fake: Fake = await startFake(server);
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write(
    "routes.yaml",
    `routes:
  fake:
    base_url: ${fake.url}
    concurrency: ${concurrency}
    timeout_s: 120
    retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`,
  );
  return { fake, p };
}

const metrics = (p: Project) => JSON.parse(p.read(`${RESULTS}/metrics.json`));
const replies = (p: Project) =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; error: string | null; format: string });
const formatsSent = (fake: Fake) => new Set(fake.stats.received.map((x) => x.body.response_format?.type));

describe("response format fallback", () => {
  it.each(["vllm-context-length", "openai-context-length", "openai-unsupported-parameter"])(
    "lowers no item's format on %s, however many items it hits",
    async (shape) => {
      const { fake, p } = await setup({ replay: { [shape]: 10 }, faultAttempts: 99 }, 1);
      const r = await p.buildAgainstFake();
      expect(fake.stats.faults[`replay-${shape}`]).toBeGreaterThanOrEqual(3);
      expect(formatsSent(fake)).toEqual(new Set(["json_schema"]));
      expect(metrics(p).metrics.response_format).toEqual({ json_schema: 138 });
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
    expect(metrics(p).metrics.response_format).toEqual({ json_object: 138 });
  });
});
