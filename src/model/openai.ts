// OpenAI's chat completions, as every OpenAI-compatible server takes them: the body (the task's request, the
// stage's fields, the route's fields, per-model overrides), its key, its path and headers, what a reply says
// (src/model/reply.ts) and what an error means (src/model/refusal.ts, rate-limit.ts). The transport
// (src/model/client.ts, http.ts) sends it and knows nothing of it.
import type { Json } from "../util/json.js";
import { deepMerge, serialisedRequest, sortedSchema, type Fields } from "./body-fields.js";
import type { Route } from "./registry.js";
import { readReply, successBody } from "./reply.js";
import { classifyRefusal } from "./refusal.js";
import { bodyWaitMs, isTransient, quotaProblem, rateAdvice } from "./rate-limit.js";
import type { Tokens } from "./price.js";
import {
  FIXED_FIELD_FIX,
  fixedFieldMessage,
  fixedFieldProblems,
  thinkingOffFields,
  tokenField,
} from "./model-rules.js";
import {
  UnsendableRequest,
  WIRE_FORMATS,
  type BodyParams,
  type ChatRequest,
  type ErrorReading,
  type ErrorReply,
  type Protocol,
  type ReplyFields,
  type WireFormat,
  numberAt,
} from "./protocol.js";

/** The task's messages and the generation fields: the stage's, then the request's own (its
 *  configuration). */
function generationBody(req: ChatRequest, params: BodyParams, route: Route, model: string): Fields {
  const body: Fields = { model, messages: req.messages as unknown as Json };
  // The spec's max_tokens goes out under the name the model takes (route.request.token_field, models).
  const tokens = tokenField(route, model);
  // Explicit 0 and false are values, not absences: test with !== undefined, never truthiness.
  if (params.max_tokens !== undefined) body[tokens] = params.max_tokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.top_p !== undefined) body.top_p = params.top_p;
  for (const [field, value] of Object.entries(req.generation ?? {}))
    if (value !== undefined) body[field === "max_tokens" ? tokens : field] = value;
  return body;
}

/** The response format asked for, with the route's fields for a schema. */
function withFormat(body: Fields, req: ChatRequest, route: Route, format: WireFormat): Fields {
  if (format === "json_schema" && req.schema) {
    const schema = sortedSchema(req.schema.schema);
    body.response_format = {
      type: "json_schema",
      json_schema: { name: req.schema.name, strict: true, schema },
    };
    return deepMerge(body, route.request.schema_mode ?? {});
  }
  if (format === "json_object") body.response_format = { type: "json_object" };
  return body;
}

/**
 * The exact body sent: the task's request, the spec's fields, the route's fields, then per-model overrides.
 */
export function requestBody(
  req: ChatRequest,
  params: BodyParams,
  route: Route,
  model: string,
  format: WireFormat,
): Fields {
  let body = deepMerge(generationBody(req, params, route, model), route.request.extra ?? {});
  // A per-model override's fields replace the route's thinking-off fields
  // (they were validated for that model).
  const override = params.overrides?.[`${route.name}/${model}`] ?? params.overrides?.[model];
  if (params.thinking === "off" && !override?.fields)
    body = deepMerge(body, thinkingOffFieldsOf(route, model));
  body = withFormat(body, req, route, format);
  if (override?.fields) body = deepMerge(body, override.fields);
  if (override?.assistant_prefill !== undefined) {
    const prefill = { role: "assistant", content: override.assistant_prefill };
    body.messages = [...(body.messages as Json[]), prefill];
  }
  const unsendable = fixedFieldProblems(route, model, body)[0];
  if (unsendable) {
    const where = req.configuration ? ` (request configuration ${req.configuration})` : "";
    throw new UnsendableRequest(fixedFieldMessage(route, model, unsendable) + where, FIXED_FIELD_FIX);
  }
  return body;
}

/** The fields a thinking-off request sends to this model, or why the route cannot send one. */
const thinkingOffFieldsOf = (route: Route, model: string): Fields =>
  thinkingOffFields(route, model, (lowest) => ({
    message:
      `route ${route.name} does not declare how to switch thinking off` +
      `${lowest ? ` (or the lowest reasoning effort for ${model})` : ""}, ` +
      "and this task runs with thinking off",
    fix:
      `add request.${lowest ? "reasoning_low" : "thinking_off"} to route ${route.name} ` +
      "(e.g. chat_template_kwargs: {enable_thinking: false}) in its registry file",
  }));

export { requestKey, serialisedRequest } from "./body-fields.js";

/** What a chat completion says, as a reply record keeps it. */
export function replyFields(body: Json): ReplyFields {
  const read = readReply(body);
  const usage = (body as { usage?: Json }).usage;
  return {
    text: read.text,
    finish_reason: read.finish_reason,
    reasoning: read.reasoning,
    // A think tag, opening or closing (a chat template may open the block in the prompt: a bare </think>).
    think: /<\/?think\b/i.test(read.text),
    // Kept only when the server sent them, so replies of servers without them stay as they were.
    ...(read.reasoning_content !== null ? { reasoning_content: read.reasoning_content } : {}),
    ...(usage !== undefined ? { usage } : {}),
    ...(read.refusal !== null ? { refusal: read.refusal } : {}),
    ...(read.tool_calls > 0 ? { tool_calls: read.tool_calls } : {}),
    ...(read.served_model !== null ? { served_model: read.served_model } : {}),
  };
}

/** OpenAI's usage: cached tokens are part of prompt_tokens and reasoning tokens part of completion_tokens
 *  (platform.openai.com/docs/api-reference/chat/object, `usage`), as medbench's shape counts them. */
export function openaiTokens(usage: Json | undefined): Tokens | null {
  const read = usage as {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    completion_tokens_details?: { reasoning_tokens?: unknown } | null;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  } | null;
  if (!read || typeof read !== "object") return null;
  const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
  if (typeof read.prompt_tokens !== "number" && typeof read.completion_tokens !== "number") return null;
  return {
    prompt: count(read.prompt_tokens),
    completion: count(read.completion_tokens),
    reasoning: count(read.completion_tokens_details?.reasoning_tokens),
    cached: count(read.prompt_tokens_details?.cached_tokens),
  };
}

/**
 * What an error reply means: a billing stop (OpenAI's 429 insufficient_quota, a 402 such as OpenRouter's
 * "Insufficient credits") stops the route (waiting will not help); 408, 409, 429 and 5xx are tried again,
 * a 429 pacing the route after the wait its headers, or its body (OpenRouter's), give
 * (src/model/rate-limit.ts); anything else is a refusal, read by classifyRefusal.
 */
export function readError({ status, headers, text }: ErrorReply, tokens: number): ErrorReading {
  const quota = quotaProblem(status, text);
  if (quota !== null)
    return {
      kind: "stop_route",
      why:
        `the provider says the account is out of quota (${quota}): ` +
        "a billing problem, not a rate limit, so waiting will not help; add credit or raise the " +
        "account's spending limit, or use another key",
    };
  if (!isTransient(status)) return { kind: "refused" };
  const advice = rateAdvice(headers, tokens);
  if (status === 429) advice.waitMs ??= bodyWaitMs(text);
  return { kind: "retry", rateLimited: status === 429, advice };
}

export const openai: Protocol = {
  name: "openai",
  formats: WIRE_FORMATS,
  path: () => "/chat/completions",
  headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  body: requestBody,
  serialise: serialisedRequest,
  success: successBody,
  reply: replyFields,
  tokens: openaiTokens,
  outputBound: (body) => numberAt(body, ["max_completion_tokens"], ["max_tokens"]),
  error: readError,
  refusal: classifyRefusal,
};
