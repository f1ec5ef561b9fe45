// Anthropic's Messages API (POST /v1/messages; facts from docs.anthropic.com/en/api/messages and the types
// of anthropics/anthropic-sdk-typescript at bfa9197f0182084941052be9752c948638421601,
// src/resources/messages/messages.ts): the key in x-api-key and the API version in anthropic-version; the
// system prompt top-level, max_tokens required; thinking off by sending no `thinking`, on by
// `thinking: {type: "enabled", budget_tokens}`; a reply schema as a forced call of one tool whose input is
// the schema (or, with thinking on, which refuses a forced tool, as structured output). A reply is a list
// of content blocks and a stop_reason. What its errors mean: ./anthropic-errors.ts.
import type { Json } from "../util/json.js";
import { deepMerge, serialisedRequest, sortedSchema, type Fields } from "./body-fields.js";
import type { Route } from "./registry.js";
import { FIXED_FIELD_FIX, fixedFieldMessage, fixedFieldProblems } from "./model-rules.js";
import { anthropicError, anthropicRefusal } from "./anthropic-errors.js";
import type { Tokens } from "./price.js";
import {
  UnsendableRequest,
  type BodyParams,
  type ChatRequest,
  type Protocol,
  type ReplyFields,
  type WireFormat,
  numberAt,
} from "./protocol.js";

/** The API version every request names (the SDK's, client.ts: 'anthropic-version': '2023-06-01'). */
export const ANTHROPIC_VERSION = "2023-06-01";
/** The least thinking budget the API takes (ThinkingConfigEnabled.budget_tokens: "Must be ≥1024"). */
const MIN_BUDGET = 1024;

type Obj = Record<string, Json>;
const isObj = (value: unknown): value is Obj =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The system prompt (top-level `system`) and the turns (user and assistant only). */
function split(messages: ChatRequest["messages"]): { system: string | null; turns: Json[] } {
  const system = messages.filter((message) => message.role === "system").map((message) => message.content);
  const turns = messages
    .filter((message) => message.role !== "system")
    .map(({ role, content }) => ({ role, content }));
  return { system: system.length ? system.join("\n\n") : null, turns };
}

/** The task's messages and the generation fields (the stage's, then the request's own), max_tokens named. */
function generationBody(req: ChatRequest, params: BodyParams, model: string): Fields {
  const { system, turns } = split(req.messages);
  const body: Fields = { model, messages: turns };
  if (system !== null) body.system = system;
  // Explicit 0 is a value, not an absence.
  if (params.max_tokens !== undefined) body.max_tokens = params.max_tokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.top_p !== undefined) body.top_p = params.top_p;
  for (const [field, value] of Object.entries(req.generation ?? {}))
    if (value !== undefined) body[field] = value;
  return body;
}

/** Thinking on: a budget of half of max_tokens (at least the API's least), which must stay below it. */
function thinkingOn(body: Fields, route: Route, model: string): Fields {
  const maxTokens = body.max_tokens as number;
  const budget = Math.max(MIN_BUDGET, Math.floor(maxTokens / 2));
  if (budget >= maxTokens)
    throw new UnsendableRequest(
      `model ${model} on route ${route.name}: thinking on needs max_tokens above ${MIN_BUDGET} ` +
        `(the least thinking budget, which counts toward max_tokens), and this stage sends ${maxTokens}`,
      `raise max_tokens above ${MIN_BUDGET}, or run the task with thinking off`,
    );
  // "Thinking isn't compatible with temperature or top_k modifications" (extended thinking docs): only 1.
  if (body.temperature !== undefined && body.temperature !== 1)
    throw new UnsendableRequest(
      `model ${model} on route ${route.name}: with thinking on, Anthropic takes temperature only at 1, ` +
        `and this stage sends ${JSON.stringify(body.temperature)}`,
      "leave temperature out of the spec (or set it to 1) for a thinking-on run, or run with thinking off",
    );
  return { ...body, thinking: { type: "enabled", budget_tokens: budget } };
}

/** The reply schema: the input of one tool the model must call, or with thinking on (which refuses a forced
 *  tool: "Thinking may not be enabled when tool_choice forces tool use") structured output. */
function withFormat(body: Fields, req: ChatRequest, route: Route, format: WireFormat): Fields {
  if (format !== "json_schema" || !req.schema) return body;
  const schema = sortedSchema(req.schema.schema);
  const out: Fields =
    body.thinking !== undefined
      ? { ...body, output_config: { format: { type: "json_schema", schema } } }
      : {
          ...body,
          tools: [
            { name: req.schema.name, description: "Give the answer in this shape.", input_schema: schema },
          ],
          tool_choice: { type: "tool", name: req.schema.name },
        };
  return deepMerge(out, route.request.schema_mode ?? {});
}

/** The exact body sent: the task's request, the spec's fields, the route's, thinking, format, overrides. */
export function anthropicBody(
  req: ChatRequest,
  params: BodyParams,
  route: Route,
  model: string,
  format: WireFormat,
): Fields {
  let body = deepMerge(generationBody(req, params, model), route.request.extra ?? {});
  const where = req.configuration ? ` (request configuration ${req.configuration})` : "";
  if (typeof body.max_tokens !== "number")
    throw new UnsendableRequest(
      `route ${route.name} speaks Anthropic's Messages API, which requires max_tokens${where}, and the ` +
        "stage sends none",
      "set max_tokens in the spec (the model stage's params), or in the route's request.extra",
    );
  if (params.thinking === "on") body = thinkingOn(body, route, model);
  body = withFormat(body, req, route, format);
  const override = params.overrides?.[`${route.name}/${model}`] ?? params.overrides?.[model];
  if (override?.fields) body = deepMerge(body, override.fields);
  // A prefill is native: the reply continues the last assistant turn.
  if (override?.assistant_prefill !== undefined)
    body.messages = [
      ...(body.messages as Json[]),
      { role: "assistant", content: override.assistant_prefill },
    ];
  const unsendable = fixedFieldProblems(route, model, body)[0];
  if (unsendable)
    throw new UnsendableRequest(fixedFieldMessage(route, model, unsendable) + where, FIXED_FIELD_FIX);
  return body;
}

/** A 2xx's text as a Message, or why it is none: an error event in it, a stream, a body of another type. */
export function anthropicSuccess(
  text: string,
  contentType: string | null,
): { body: Json } | { problem: string } {
  const type = (contentType ?? "no content-type").split(";")[0]!.trim();
  if (type === "text/event-stream" || /^\s*(data|event):/.test(text))
    return { problem: "an event stream (text/event-stream) where a JSON reply was expected" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: `malformed response body (not JSON, ${type})` };
  }
  if (!isObj(parsed)) return { problem: "malformed response body (not an object)" };
  if (parsed.type === "error") {
    const error = isObj(parsed.error) ? parsed.error : {};
    return { problem: `an error in a 200 reply: ${String(error.type)}: ${String(error.message)} (${type})` };
  }
  if (parsed.type !== "message" || !Array.isArray(parsed.content))
    return { problem: "malformed response body (not a message with content)" };
  return { body: parsed };
}

/** How a reply ended, in medbench's words (src/model/protocol.ts ReplyFields.finish_reason). */
const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  refusal: "stop", // with the refusal in `refusal`
  tool_use: "stop", // the one tool offered is the reply schema: its input is the answer
  max_tokens: "length",
  model_context_window_exceeded: "length",
};

interface Blocks {
  text: string;
  thinking: string[];
  redacted: boolean;
  tools: number;
}

/** The content blocks read: the text, the answer of the schema's tool, and the thinking. */
function blocksOf(content: Json[]): Blocks {
  const out: Blocks = { text: "", thinking: [], redacted: false, tools: 0 };
  for (const block of content) {
    if (!isObj(block)) continue;
    if (block.type === "text" && typeof block.text === "string") out.text += block.text;
    else if (block.type === "tool_use") {
      out.tools++;
      if (out.tools === 1) out.text += JSON.stringify(block.input ?? null);
    } else if (block.type === "thinking" && typeof block.thinking === "string")
      out.thinking.push(block.thinking);
    else if (block.type === "redacted_thinking") out.redacted = true;
  }
  return out;
}

/** The refusal's words: the explanation the API gives (stop_details), or its category. */
function refusalOf(message: Obj): string | undefined {
  if (message.stop_reason !== "refusal") return undefined;
  const details = isObj(message.stop_details) ? message.stop_details : {};
  if (typeof details.explanation === "string" && details.explanation) return details.explanation;
  return `stop_reason refusal${typeof details.category === "string" ? ` (${details.category})` : ""}`;
}

/** What a Message says, as a reply record keeps it. */
export function anthropicReply(body: Json): ReplyFields {
  const message: Obj = isObj(body) ? body : {};
  const blocks = blocksOf(Array.isArray(message.content) ? message.content : []);
  const stop = typeof message.stop_reason === "string" ? message.stop_reason : null;
  const usage = isObj(message.usage) ? message.usage : undefined;
  const details = usage && isObj(usage.output_tokens_details) ? usage.output_tokens_details : {};
  const refusal = refusalOf(message);
  return {
    text: blocks.text,
    finish_reason: stop === null ? null : (FINISH[stop] ?? stop),
    reasoning: blocks.thinking.some((text) => text.length > 0) || blocks.redacted,
    think: /<\/?think\b/i.test(blocks.text),
    ...(blocks.thinking.length ? { reasoning_content: blocks.thinking.join("\n\n") } : {}),
    ...(typeof details.thinking_tokens === "number" ? { reasoning_tokens: details.thinking_tokens } : {}),
    ...(message.usage !== undefined ? { usage: message.usage } : {}),
    ...(refusal !== undefined ? { refusal } : {}),
    ...(blocks.tools > 1 ? { tool_calls: blocks.tools } : {}),
    ...(typeof message.model === "string" ? { served_model: message.model } : {}),
  };
}

/** Anthropic's usage in medbench's shape: input_tokens excludes the cache's reads and writes (Usage: "Total
 *  input tokens in a request is the summation of input_tokens, cache_creation_input_tokens, and
 *  cache_read_input_tokens"); thinking is part of output_tokens. */
export function anthropicTokens(usage: Json | undefined): Tokens | null {
  if (!isObj(usage) || (typeof usage.input_tokens !== "number" && typeof usage.output_tokens !== "number"))
    return null;
  const count = (value: Json | undefined) =>
    typeof value === "number" && Number.isFinite(value) ? value : 0;
  const details = isObj(usage.output_tokens_details) ? usage.output_tokens_details : {};
  const cached = count(usage.cache_read_input_tokens);
  return {
    prompt: count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + cached,
    completion: count(usage.output_tokens),
    reasoning: count(details.thinking_tokens),
    cached,
  };
}

export const anthropic: Protocol = {
  name: "anthropic",
  formats: ["json_schema", "none"],
  path: () => "/v1/messages",
  headers: (apiKey): Record<string, string> => ({
    "anthropic-version": ANTHROPIC_VERSION,
    ...(apiKey ? { "x-api-key": apiKey } : {}),
  }),
  body: anthropicBody,
  serialise: serialisedRequest,
  success: anthropicSuccess,
  reply: anthropicReply,
  tokens: anthropicTokens,
  outputBound: (body) => numberAt(body, ["max_tokens"]),
  error: anthropicError,
  refusal: anthropicRefusal,
  // The system prompt is an item's text too (a task may vary it per item): never recorded in
  // metrics.request.
  itemFields: ["messages", "system"],
};
