// The body the gemini protocol sends (src/model/gemini.ts) through the shipped gemini route: the system
// prompt as systemInstruction, the turns as contents (user, model), the spec's fields under
// generationConfig's names, the route's thinking fields per model; a field Gemini has no counterpart for
// refuses the request; the key names the model (the body does not), and the path is the model's resource
// name.
import { describe, expect, it } from "vitest";
import { loadRoutes } from "../../src/model/registry.js";
import { gemini } from "../../src/model/gemini.js";
import { UnsendableRequest, type ChatRequest } from "../../src/model/protocol.js";

const route = loadRoutes([]).get("gemini")!;
const REQUEST: ChatRequest = {
  messages: [
    { role: "system", content: "You are a scrub nurse." },
    { role: "user", content: "Hand me the gauze." },
    { role: "assistant", content: "{" },
  ],
  schema: { name: "reply", schema: { type: "object", properties: { a: { type: "string" } } } },
};
const params = { max_tokens: 800, temperature: 0, top_p: 1, thinking: "off" as const };

describe("a Gemini body", () => {
  it("writes the messages, the fields and the schema in Gemini's terms", () => {
    const body = gemini.body(REQUEST, params, route, "gemini-2.5-flash", "json_schema");
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: "You are a scrub nurse." }] },
      contents: [
        { role: "user", parts: [{ text: "Hand me the gauze." }] },
        { role: "model", parts: [{ text: "{" }] },
      ],
      generationConfig: {
        maxOutputTokens: 800,
        temperature: 0,
        topP: 1,
        thinkingConfig: { thinkingBudget: 0 },
        responseMimeType: "application/json",
        responseSchema: { type: "OBJECT", properties: { a: { type: "STRING" } }, propertyOrdering: ["a"] },
      },
    });
    const plain = gemini.body(REQUEST, params, route, "gemini-2.5-flash", "json_object");
    expect(plain.generationConfig).toMatchObject({ responseMimeType: "application/json" });
    expect(plain.generationConfig).not.toHaveProperty("responseSchema");
  });

  it("sends each family its thinking fields, and refuses a field Gemini has none for", () => {
    const config = (model: string) =>
      (gemini.body(REQUEST, params, route, model, "none").generationConfig as { thinkingConfig?: unknown })
        .thinkingConfig;
    expect(config("gemini-2.5-pro")).toEqual({ thinkingBudget: 128, includeThoughts: true });
    expect(config("gemini-3-pro-preview")).toEqual({ thinkingLevel: "LOW", includeThoughts: true });
    expect(config("gemini-2.0-flash")).toBeUndefined();
    const odd = { ...REQUEST, generation: { logit_bias: { "1": 2 } } };
    expect(() => gemini.body(odd, params, route, "gemini-2.5-flash", "none")).toThrow(UnsendableRequest);
    expect(() => gemini.body(REQUEST, params, route, "gemini-exp-1", "none")).toThrow(/thinking off/);
  });

  it("is keyed with its model and base URL, though it names neither", () => {
    const key = (model: string, base = route) =>
      gemini.serialise(base, gemini.body(REQUEST, params, base, model, "none")).key;
    expect(key("gemini-2.5-flash")).toBe(key("gemini-2.5-flash"));
    expect(key("gemini-2.5-flash")).not.toBe(key("gemini-2.5-flash-lite"));
    expect(key("gemini-2.5-flash", { ...route, base_url: "http://127.0.0.1:9" })).not.toBe(
      key("gemini-2.5-flash"),
    );
  });

  it("goes to the model's resource name", () => {
    expect(gemini.path("gemini-2.5-flash")).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(gemini.path("tunedModels/my-model")).toBe("/v1beta/tunedModels/my-model:generateContent");
    expect(gemini.headers("k")).toEqual({ "x-goog-api-key": "k" });
  });
});
