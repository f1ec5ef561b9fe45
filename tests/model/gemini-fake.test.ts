// The fake Gemini API server (scripts/fake-gemini.mjs) and its corpus of Gemini reply and error shapes
// (scripts/provider-replies/gemini/): every entry names its source, the fake serves each over real HTTP as
// written, and it checks a body as the API does (the key, unknown fields, roles, thinking budgets per
// model).
import { afterEach, describe, expect, it } from "vitest";
import { startGeminiFake, type GeminiFake } from "../support/fake-gemini.js";
// @ts-expect-error: a plain ES module of the scripts, without types
import { loadReplies } from "../../scripts/provider-replies/index.mjs";
import { REPO } from "../support/helpers.js";

interface Entry {
  source: { provider: string; document: string };
  status: number;
  body: unknown;
  expect: string;
}

const servers: GeminiFake[] = [];
const fake = async (options: Record<string, unknown>) => {
  const server = await startGeminiFake({ policy: "echo", apiKey: "key-1", ...options });
  servers.push(server);
  return server;
};
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

async function post(server: GeminiFake, model: string, body: unknown, key: string | null = "key-1") {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== null) headers["x-goog-api-key"] = key;
  const url = `${server.url}/v1beta/models/${model}:generateContent`;
  const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const hello = (config: Record<string, unknown> = {}) => ({
  contents: [{ role: "user", parts: [{ text: "the answer" }] }],
  generationConfig: config,
});
const message = (json: Record<string, unknown>) => (json.error as { message: string }).message;

describe("the Gemini corpus", () => {
  const corpus = loadReplies(`${REPO}/scripts/provider-replies/gemini`) as Record<string, Entry>;

  it("has entries, each naming its provider and document", () => {
    expect(Object.keys(corpus).length).toBeGreaterThan(10);
    for (const entry of Object.values(corpus)) expect(entry.source.document.length).toBeGreaterThan(20);
  });

  it.each(Object.keys(corpus))("the fake replays %s as written", async (name) => {
    const server = await fake({ replay: { [name]: 1 } });
    const got = await post(server, "gemini-2.5-flash", hello());
    const entry = corpus[name]!;
    expect(got.status).toBe(entry.status);
    expect(JSON.stringify(got.json)).not.toContain("{{");
    expect(Array.isArray(got.json)).toBe(Array.isArray(entry.body));
  });
});

describe("the fake checks a body as the API does", () => {
  it("answers with candidates, usage and the model version", async () => {
    const got = await post(
      await fake({}),
      "gemini-2.5-flash",
      hello({ thinkingConfig: { thinkingBudget: 0 } }),
    );
    expect(got.status).toBe(200);
    const candidate = (got.json.candidates as { content: { parts: unknown[] }; finishReason: string }[])[0]!;
    expect(candidate.content.parts).toEqual([{ text: "the answer" }]);
    expect(candidate.finishReason).toBe("STOP");
    expect(got.json.modelVersion).toBe("gemini-2.5-flash");
    expect(got.json.usageMetadata).not.toHaveProperty("thoughtsTokenCount");
  });

  it("thinks when the model does, and shows the thought summary when asked", async () => {
    const server = await fake({});
    const thinking = { thinkingConfig: { thinkingBudget: 128, includeThoughts: true } };
    const got = await post(server, "gemini-2.5-pro", hello(thinking));
    const parts = (got.json.candidates as { content: { parts: { thought?: boolean }[] } }[])[0]!.content
      .parts;
    expect(parts[0]!.thought).toBe(true);
    expect(got.json.usageMetadata).toHaveProperty("thoughtsTokenCount");
  });

  it.each([
    [
      "gemini-2.5-pro",
      { thinkingBudget: 0 },
      "Budget 0 is invalid. This model only works in thinking mode.",
    ],
    ["gemini-2.5-pro", { thinkingBudget: 64 }, "between 128 and 32768"],
    ["gemini-2.5-flash-lite", { thinkingBudget: 100 }, "between 512 and 24576"],
    ["gemini-2.5-flash", { thinkingLevel: "LOW" }, "Thinking level is not supported"],
    ["gemini-2.0-flash", { thinkingBudget: 0 }, "Thinking is not supported"],
  ])("refuses %s a thinkingConfig it does not take (%j)", async (model, thinkingConfig, words) => {
    const got = await post(await fake({}), model, hello({ thinkingConfig }));
    expect(got.status).toBe(400);
    expect(message(got.json)).toContain(words);
  });

  it("refuses an unknown field, a role not user or model, a schema without the JSON type", async () => {
    const server = await fake({});
    const unknown = await post(server, "gemini-2.5-flash", { ...hello(), response_format: {} });
    expect(message(unknown.json)).toBe(
      'Invalid JSON payload received. Unknown name "response_format": Cannot find field.',
    );
    const role = await post(server, "gemini-2.5-flash", {
      contents: [{ role: "assistant", parts: [{ text: "x" }] }],
    });
    expect(message(role.json)).toBe("Please use a valid role: user, model.");
    const schema = await post(server, "gemini-2.5-flash", hello({ responseSchema: { type: "STRING" } }));
    expect(schema.status).toBe(400);
  });

  it("refuses a missing key (403), a wrong key (400 API_KEY_INVALID), an unknown model (404)", async () => {
    const server = await fake({});
    expect((await post(server, "gemini-2.5-flash", hello(), null)).status).toBe(403);
    const wrong = await post(server, "gemini-2.5-flash", hello(), "key-2");
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.json)).toContain("API_KEY_INVALID");
    expect((await post(server, "gpt-4o", hello())).status).toBe(404);
  });
});
