// Google's Gemini API (generateContent), as https://ai.google.dev/api/generate-content documents it: the
// model in the path (POST {base}/v1beta/models/{model}:generateContent, as @google/genai builds it), the key
// in x-goog-api-key, the system prompt as systemInstruction, the other turns as contents with roles user and
// model, the generation fields in generationConfig (maxOutputTokens, temperature, topP), a reply schema as
// responseMimeType application/json with responseSchema (./gemini-schema.ts), and the route's fields
// (thinking off: thinkingConfig) laid over them. Replies and errors are read in ./gemini-reply.ts.
import type { Json } from "../util/json.js";
import { sortKeys } from "../util/json.js";
import { sortedJsonText, fixedPart } from "../util/sorted-json.js";
import { deepMerge, keyedPayload, type Fields } from "./body-fields.js";
import type { Route } from "./registry.js";
import { FIXED_FIELD_FIX, fixedFieldMessage, fixedFieldProblems, thinkingOffFields } from "./model-rules.js";
import { geminiSchema } from "./gemini-schema.js";
import {
  classifyGeminiRefusal,
  geminiReply,
  geminiSuccess,
  geminiTokens,
  readGeminiError,
} from "./gemini-reply.js";
import {
  UnsendableRequest,
  type BodyParams,
  type ChatRequest,
  type Protocol,
  type WireFormat,
  numberAt,
} from "./protocol.js";

// The spec's generation fields by the names generationConfig gives them.
const GENERATION: Record<string, string> = {
  max_tokens: "maxOutputTokens",
  temperature: "temperature",
  top_p: "topP",
  top_k: "topK",
  seed: "seed",
  stop: "stopSequences",
  presence_penalty: "presencePenalty",
  frequency_penalty: "frequencyPenalty",
};

/** The generation fields by the spec's names: the stage's, then the request's own (its configuration). */
function generationFields(req: ChatRequest, params: BodyParams): Fields {
  const fields: Record<string, Json | undefined> = {
    max_tokens: params.max_tokens,
    temperature: params.temperature,
    top_p: params.top_p,
    ...req.generation,
  };
  // Explicit 0 and false are values, not absences: test with !== undefined, never truthiness.
  const out: Fields = {};
  for (const [field, value] of Object.entries(fields)) if (value !== undefined) out[field] = value;
  return out;
}

/** The generation fields under generationConfig's names. */
function generationConfig(fields: Fields): Fields {
  const config: Fields = {};
  for (const [field, value] of Object.entries(fields)) {
    const name = GENERATION[field];
    if (name === undefined)
      throw new UnsendableRequest(
        `the request's generation field ${field} has no counterpart in Gemini's generationConfig`,
        `leave ${field} out of the spec for a Gemini route, or set the field under request.extra ` +
          "(generationConfig: {...}) in the route",
      );
    config[name] = field === "stop" && typeof value === "string" ? [value] : value;
  }
  return config;
}

/** The chat messages as systemInstruction and contents (a system message is an instruction, not a turn). */
function turns(messages: ChatRequest["messages"]): Fields {
  const system = messages.filter((message) => message.role === "system");
  const contents = messages
    .filter((message) => message.role !== "system")
    .map((message) => ({
      role: message.role === "assistant" ? "model" : "user",
      parts: [{ text: message.content }],
    }));
  const out: Fields = { contents };
  if (system.length) out.systemInstruction = { parts: system.map((message) => ({ text: message.content })) };
  return out;
}

const isObj = (value: unknown): value is Fields =>
  value !== null && typeof value === "object" && !Array.isArray(value);

// A task's schema is one object shared by all its requests: converted and frozen once (its JSON made once).
const converted = new WeakMap<object, Json>();
function responseSchema(schema: Json): Json {
  if (!isObj(schema)) return geminiSchema(schema);
  let out = converted.get(schema);
  if (out === undefined) converted.set(schema, (out = fixedPart(sortKeys(geminiSchema(schema)) as Json)));
  return out;
}

/** The response format asked for: JSON with the schema, JSON alone, or nothing. */
function formatFields(req: ChatRequest, format: WireFormat): Fields {
  if (format === "json_schema" && req.schema)
    return { responseMimeType: "application/json", responseSchema: responseSchema(req.schema.schema) };
  if (format === "json_object") return { responseMimeType: "application/json" };
  return {};
}

/** The fields a thinking-off request sends to this model (the route's rules), or why it cannot send one. */
const thinkingOffFieldsOf = (route: Route, model: string): Fields =>
  thinkingOffFields(route, model, () => ({
    message:
      `route ${route.name} does not declare how to switch thinking off for ${model}, ` +
      "and this task runs with thinking off",
    fix:
      `add request.models "${model}": { thinking_off: { generationConfig: { thinkingConfig: ` +
      `{ thinkingBudget: 0 } } } } (or reasoning_low with the lowest budget) to route ${route.name}`,
  }));

// The model of each body, for its key: a Gemini body does not name its model (the path does).
const modelOfBody = new WeakMap<object, string>();

/** The exact body sent: the task's request, the spec's fields, the route's, then per-model overrides. */
export function geminiBody(
  req: ChatRequest,
  params: BodyParams,
  route: Route,
  model: string,
  format: WireFormat,
): Fields {
  const override = params.overrides?.[`${route.name}/${model}`] ?? params.overrides?.[model];
  const messages = [...req.messages];
  if (override?.assistant_prefill !== undefined)
    messages.push({ role: "assistant", content: override.assistant_prefill });
  const generation = generationFields(req, params);
  // A model's fixed fields (request.models "PATTERN".fixed) are the spec's generation fields.
  const unsendable = fixedFieldProblems(route, model, generation)[0];
  if (unsendable) {
    const where = req.configuration ? ` (request configuration ${req.configuration})` : "";
    throw new UnsendableRequest(fixedFieldMessage(route, model, unsendable) + where, FIXED_FIELD_FIX);
  }
  let body: Fields = { ...turns(messages), generationConfig: generationConfig(generation) };
  body = deepMerge(body, route.request.extra ?? {});
  if (params.thinking === "off" && !override?.fields)
    body = deepMerge(body, thinkingOffFieldsOf(route, model));
  body = deepMerge(body, { generationConfig: formatFields(req, format) });
  if (override?.fields) body = deepMerge(body, override.fields);
  modelOfBody.set(body, model);
  return body;
}

/** The body's bytes (sorted-key JSON) and its key: sha256 of sortedJson({ base_url, body, model }). */
export function geminiSerialised(route: Route, body: Json): { payload: Buffer; key: string } {
  const model = isObj(body) ? modelOfBody.get(body) : undefined;
  if (model === undefined) throw new Error("a Gemini body is keyed only as geminiBody made it");
  return keyedPayload(route.base_url, model, sortedJsonText(body)!);
}

/** The path under the base URL: the model as a resource name (models/NAME, unless it names one itself). */
export function geminiPath(model: string): string {
  const name = model.includes("/") ? model : `models/${model}`;
  return `/v1beta/${name.split("/").map(encodeURIComponent).join("/")}:generateContent`;
}

export const gemini: Protocol = {
  name: "gemini",
  formats: ["json_schema", "json_object", "none"],
  path: geminiPath,
  headers: (apiKey): Record<string, string> => (apiKey ? { "x-goog-api-key": apiKey } : {}),
  body: geminiBody,
  serialise: geminiSerialised,
  success: geminiSuccess,
  reply: geminiReply,
  tokens: geminiTokens,
  outputBound: (body) => numberAt(body, ["generationConfig", "maxOutputTokens"]),
  error: readGeminiError,
  refusal: classifyGeminiRefusal,
  // The item's own text: its turns and its system prompt (metrics.request counts them, never quotes them).
  itemFields: ["contents", "systemInstruction"],
};
