// Refusals read as each provider words them (src/model/refusal.ts): every refusal of the reply corpus
// (scripts/provider-replies) is classified as its entry's `expect` says.
import { describe, expect, it } from "vitest";
import { classifyRefusal, isFinal } from "../../src/model/refusal.js";
// @ts-expect-error: a plain ES module of the scripts, without types
import { loadProviderReplies, replayed } from "../../scripts/provider-replies/index.mjs";

interface Entry {
  status: number;
  body: unknown;
  expect: string;
}
const corpus = loadProviderReplies() as Record<string, Entry>;
const KINDS: Record<string, string[]> = {
  "refused-format": ["format"],
  "refused-item": ["context_length", "unsupported_parameter", "request"],
  "refused-route": ["route"],
  "refused-filtered": ["filtered"],
};
const refusals = Object.keys(corpus).filter((name) => corpus[name]!.expect in KINDS);

describe("a refusal's kind", () => {
  it("has refusals of each kind in the corpus", () => {
    const expects = new Set(refusals.map((name) => corpus[name]!.expect));
    expect([...expects].sort()).toEqual(Object.keys(KINDS).sort());
  });

  it.each(refusals)("reads %s as its entry expects", (name) => {
    const entry = corpus[name]!;
    const served = replayed(entry, { model: "m" }, "") as { status: number; body: string };
    const refusal = classifyRefusal(served.status, served.body);
    expect(KINDS[entry.expect]).toContain(refusal.kind);
    expect(refusal.message.length).toBeGreaterThan(0);
    expect(refusal.message).not.toMatch(/^\{/); // the server's message, not its JSON
  });

  it("tells context length and a parameter apart from the format", () => {
    const text = (name: string) => JSON.stringify(corpus[name]!.body);
    expect(classifyRefusal(400, text("vllm-context-length")).kind).toBe("context_length");
    expect(classifyRefusal(400, text("openai-unsupported-parameter")).kind).toBe("unsupported_parameter");
    expect(classifyRefusal(400, '{"error": "invalid JSON"}')).toEqual({
      kind: "request",
      status: 400,
      message: "invalid JSON",
    });
    expect(classifyRefusal(422, "not json at all").message).toBe("not json at all");
  });

  it("reads a context length in llama.cpp's type and TGI's words, and Azure's prompt filter", () => {
    const text = (name: string) => JSON.stringify(corpus[name]!.body);
    expect(classifyRefusal(400, text("llamacpp-context-size")).kind).toBe("context_length");
    expect(classifyRefusal(422, text("tgi-context-length")).kind).toBe("context_length");
    const filtered = classifyRefusal(400, text("azure-prompt-filter"));
    expect(filtered.kind).toBe("filtered");
    expect(isFinal(filtered)).toBe(true);
    expect(filtered.message).toMatch(/^The response was filtered due to the prompt/);
    expect(classifyRefusal(402, text("openrouter-insufficient-credits")).kind).toBe("route");
  });
});
