// The model a reply names (docs/model-requests.md, "The served model"): recorded per reply, counted in
// metrics.reply_audit, and a model other than the one asked for warned about; a date or version appended
// by the provider is the same model.
import { describe, expect, it } from "vitest";
import { cleanedAfterEach } from "../support/rig.js";
import { buildWarnings, projectAgainstFake, resultMetrics, resultRecords } from "../support/fake-build.js";
import { servesAsked } from "../../src/model/served-model.js";

const cleaned = cleanedAfterEach();

describe("which served names are the model asked for", () => {
  it.each([
    ["gpt-4o", "gpt-4o", true],
    ["gpt-4o", "gpt-4o-2024-08-06", true],
    ["claude-3-5-sonnet", "claude-3-5-sonnet-20241022", true],
    ["gpt-4", "gpt-4-0613", true],
    ["qwen3:8b", "qwen3:8b", true],
    ["llama3", "llama3:latest", true],
    ["openai/gpt-4o", "gpt-4o-2024-08-06", true],
    ["openai/gpt-4o", "openai/gpt-4o", true],
    ["Qwen/Qwen3-8B", "qwen/qwen3-8b", true],
    ["qwen3-8b", "Qwen/qwen3-8b", true],
    ["qwen3-8b", "Qwen/qwen3-32b", false],
    ["gpt-4o", "gpt-4o-mini", false],
    ["gpt-4o", "gpt-4o-mini-2024-07-18", false],
    ["openai/gpt-4o", "anthropic/gpt-4o", false],
    ["qwen3-8b", "qwen3-32b", false],
    ["llama-3-8b", "mistral-7b", false],
  ])("asked %s, served %s: %s", (asked, served, same) => {
    expect(servesAsked(asked, served)).toBe(same);
  });
});

describe("the served model in a build", () => {
  async function build(replay: Record<string, number>) {
    const { fake, p } = await projectAgainstFake(cleaned, { replay });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    const replies = resultRecords<{ served_model?: string }>(p, "replies.jsonl");
    const audit = resultMetrics(p).metrics.reply_audit;
    return { fake, r, replies, audit };
  }

  it("a substitute is recorded per reply, counted and warned; a dated name is not a mismatch", async () => {
    const { fake, r, replies, audit } = await build({
      "openrouter-served-model-fallback": 5,
      "openai-served-model-dated": 7,
    });
    expect(fake.stats.faults["replay-openrouter-served-model-fallback"]).toBeGreaterThan(0);
    expect(fake.stats.faults["replay-openai-served-model-dated"]).toBeGreaterThan(0);
    const count = (name: string) => replies.filter((x) => x.served_model === name).length;
    const substituted = count("replay-vendor/substitute-model");
    const dated = count("test-model-2024-08-06");
    expect(substituted).toBeGreaterThan(0);
    expect(dated).toBeGreaterThan(0);
    expect(count("test-model") + substituted + dated).toBe(replies.length);
    expect(audit.served_models).toEqual({
      "test-model": count("test-model"),
      "test-model-2024-08-06": dated,
      "replay-vendor/substitute-model": substituted,
    });
    expect(audit.served_model_mismatches).toBe(substituted);
    const warning = buildWarnings(r.stderr).find((m) => m.includes("another model"));
    const substitute = `replay-vendor/substitute-model: ${substituted}`;
    expect(warning).toContain(`${substituted} replies name another model than test-model (${substitute})`);
  });

  it("no warning and no mismatch when every reply names the model asked for", async () => {
    const { r, replies, audit } = await build({});
    expect(replies.every((x) => x.served_model === "test-model")).toBe(true);
    expect(audit.served_model_mismatches).toBe(0);
    expect(r.stderr).not.toContain("another model");
  });
});
