// The shipped openrouter route against the fake server replaying OpenRouter's reply shape: it sends no
// `usage: {include: true}` (documented as deprecated, with no effect), and the usage OpenRouter returns in
// every reply is still recorded and read by the thinking audit.
import { describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { startFake } from "../support/fake.js";
import { shippedRoutes } from "../support/shipped-routes.js";

const { servers, projects } = cleanedAfterEach();

describe("the openrouter route", () => {
  it("sends no usage field, and reads the usage every reply carries", async () => {
    const fake = await startFake({ policy: "voice-command", replay: { "openrouter-reasoning-tokens": 1 } });
    servers.push(fake);
    const p = new Project();
    projects.push(p);
    const route = { ...shippedRoutes().openrouter, base_url: fake.url, max_failures_in_a_row: 1000 };
    p.write("routes.yaml", stringifyYaml({ routes: { openrouter: route } }));
    const model = "openrouter/qwen/qwen3-8b";
    const r = await p.run(
      ["build", "specs/voice-command.yaml", "--model", model, "--limit", "2", "--registry", "routes.yaml"],
      { OPENROUTER_API_KEY: "sk-or-test-usage" },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.received.length).toBeGreaterThan(0);
    for (const { body } of fake.stats.received) expect(body).not.toHaveProperty("usage");
    const dir = "results/kor-surgical-robot-voice-command/openrouter_qwen_qwen3-8b.partial";
    const metrics = JSON.parse(p.read(`${dir}/metrics.json`)).metrics;
    expect(metrics.request).not.toHaveProperty("usage");
    const replies = p.read(`${dir}/replies.jsonl`).trim().split("\n");
    expect(metrics.thinking_audit.replies_with_reasoning_tokens).toBe(replies.length);
  });
});
