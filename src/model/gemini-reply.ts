// Reading what the Gemini API sends back
// (https://ai.google.dev/api/generate-content#generatecontentresponse; errors:
// https://ai.google.dev/gemini-api/docs/troubleshooting). A reply: the first candidate's parts (those marked
// `thought` are the thought summary, not the answer), its finishReason in medbench's words (a safety or
// other block: content_filter, as a prompt blocked by promptFeedback.blockReason is), usageMetadata
// (thoughtsTokenCount: the reasoning tokens) and modelVersion (the model that served it). An error: a
// google.rpc.Status `{error: {code, message, status, details}}`, or an array of one (as the API words some);
// a 429's wait is its RetryInfo.retryDelay. Shapes and their sources: scripts/provider-replies/gemini/.
import type { Json } from "../util/json.js";
import { durationMs, isTransient, retryAfterMs } from "./rate-limit.js";
import type { Refusal, RefusalKind } from "./refusal.js";
import type { ErrorReading, ErrorReply, ReplyFields } from "./protocol.js";
import type { Tokens } from "./price.js";

type Obj = Record<string, Json>;
const isObj = (value: unknown): value is Obj =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** A 2xx's text as a reply body, or why it is none (a failed try, sent again). */
export function geminiSuccess(
  text: string,
  contentType: string | null,
): { body: Json } | { problem: string } {
  const type = (contentType ?? "no content-type").split(";")[0]!.trim();
  if (type === "text/event-stream" || /^\s*data:/.test(text))
    return { problem: "an event stream (text/event-stream) where a JSON reply was expected" };
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    return { problem: `malformed response body (not JSON, ${type})` };
  }
  const status = statusOf(parsed);
  if (status !== null) return { problem: `an error in a 2xx reply: ${wording(status)} (${type})` };
  if (!isObj(parsed)) return { problem: "malformed response body (not an object)" };
  if (blockReason(parsed) !== null) return { body: parsed }; // the prompt was blocked: an answer
  const candidates = parsed.candidates;
  if (!Array.isArray(candidates) || candidates.length === 0)
    return { problem: "malformed response body (no candidates and no promptFeedback.blockReason)" };
  const first = candidates[0];
  if (!isObj(first)) return { problem: "malformed response body (the first candidate is no object)" };
  if (typeof first.finishReason !== "string")
    return { problem: "malformed response body (no finishReason)" };
  // Ended normally with no answer text (only thoughts, or nothing): no reply, as gemini-cli takes it.
  if (first.finishReason === "STOP" && answerText(first) === "")
    return { problem: "an empty reply (finishReason STOP, no text part but thoughts)" };
  return { body: parsed };
}

/** The candidate's parts' text, thoughts aside. */
function answerText(candidate: Obj): string {
  const parts =
    isObj(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  return parts
    .filter((part): part is Obj => isObj(part) && part.thought !== true && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("");
}

const blockReason = (body: Obj): string | null => {
  const feedback = body.promptFeedback;
  return isObj(feedback) && typeof feedback.blockReason === "string" ? feedback.blockReason : null;
};

// finishReason values that mean the provider withheld the output
// (https://ai.google.dev/api/generate-content#FinishReason).
const FILTERED = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);
const TOOL_CALLS = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]);

/** Gemini's finishReason in medbench's (OpenAI's) words; another value, lower-cased, as it is. */
function finishReason(reason: Json | undefined): string | null {
  if (typeof reason !== "string") return null;
  if (reason === "STOP") return "stop";
  if (reason === "MAX_TOKENS") return "length";
  if (FILTERED.has(reason)) return "content_filter";
  if (TOOL_CALLS.has(reason)) return "tool_calls";
  return reason.toLowerCase();
}

/** What a reply body says, as a reply record keeps it. */
export function geminiReply(body: Json): ReplyFields {
  const reply = isObj(body) ? body : {};
  const candidate = Array.isArray(reply.candidates) && isObj(reply.candidates[0]) ? reply.candidates[0] : {};
  const parts =
    isObj(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  let text = "";
  const thoughts: string[] = [];
  for (const part of parts) {
    if (!isObj(part) || typeof part.text !== "string") continue;
    if (part.thought === true) thoughts.push(part.text);
    else text += part.text;
  }
  const usage = isObj(reply.usageMetadata) ? reply.usageMetadata : undefined;
  const blocked = blockReason(reply) !== null;
  const thoughtTokens = usage?.thoughtsTokenCount;
  return {
    text,
    finish_reason: blocked ? "content_filter" : finishReason(candidate.finishReason),
    reasoning: thoughts.length > 0,
    think: /<\/?think\b/i.test(text),
    ...(thoughts.length ? { reasoning_content: thoughts.join("\n") } : {}),
    ...(typeof thoughtTokens === "number" ? { reasoning_tokens: thoughtTokens } : {}),
    ...(usage !== undefined ? { usage } : {}),
    ...(typeof reply.modelVersion === "string" ? { served_model: reply.modelVersion } : {}),
  };
}

/** The google.rpc.Status of an error body (an object, or the first of an array), or null. */
function statusOf(parsed: unknown): Obj | null {
  const first = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed;
  return isObj(first) && isObj(first.error) ? first.error : null;
}

function parsedStatus(text: string): Obj | null {
  try {
    return statusOf(JSON.parse(text));
  } catch {
    return null;
  }
}

/** The provider's words: its status name, then its message (bounded). */
function wording(status: Obj): string {
  const name = typeof status.status === "string" ? `${status.status}: ` : "";
  const message = typeof status.message === "string" ? status.message : JSON.stringify(status);
  return `${name}${message}`.slice(0, 500);
}

const details = (status: Obj | null): Obj[] =>
  Array.isArray(status?.details) ? status.details.filter(isObj) : [];
const ofType = (status: Obj | null, type: string): Obj[] =>
  details(status).filter((detail) => detail["@type"] === `type.googleapis.com/google.rpc.${type}`);

/** The wait a RetryInfo detail asks for ("1s", "0.539477544s", a protobuf Duration), or null. */
function retryDelayMs(status: Obj | null): number | null {
  const delay = ofType(status, "RetryInfo")[0]?.retryDelay;
  return typeof delay === "string" ? durationMs(delay) : null;
}

/** A quota that resets only daily: waiting minutes will not help (gemini-cli reads it the same way). */
function dailyQuota(status: Obj | null): string | null {
  const violations = ofType(status, "QuotaFailure").flatMap((detail) =>
    Array.isArray(detail.violations) ? detail.violations.filter(isObj) : [],
  );
  const daily = violations.find(
    (violation) => typeof violation.quotaId === "string" && /PerDay/.test(violation.quotaId),
  );
  return daily ? String(daily.quotaId) : null;
}

/**
 * What an error reply means: a 429 whose quota is per day stops the route; 408, 409, 429 and 5xx are tried
 * again after RetryInfo.retryDelay (else Retry-After, else the backoff), a 429 pausing the route; any other
 * status is a refusal, read by classifyGeminiRefusal.
 */
export function readGeminiError({ status, headers, text }: ErrorReply, _tokens: number): ErrorReading {
  const error = parsedStatus(text);
  const daily = status === 429 ? dailyQuota(error) : null;
  if (daily !== null)
    return {
      kind: "stop_route",
      why:
        `the provider says a daily quota is used up ` +
        `(HTTP 429 ${daily}: ${error ? wording(error) : text}): ` +
        "waiting minutes will not help; build again after the quota resets, or use a key of a higher tier",
    };
  if (!isTransient(status)) return { kind: "refused" };
  const waitMs = retryDelayMs(error) ?? retryAfterMs(headers);
  return {
    kind: "retry",
    rateLimited: status === 429,
    advice: { waitMs, requestsPerMs: null, tokensPerMs: null },
  };
}

// Wordings, each from the API (sources in scripts/provider-replies/gemini/).
const CONTEXT_WORDS = [/input token count .* exceeds the maximum/i];
const KEY_WORDS = [/API key not valid/i, /API Key not found/i];
const PARAMETER_WORDS = [
  /budget .* is invalid/i,
  /thinking level is not supported/i,
  /not supported for this model/i,
];
const FORMAT_WORDS = [/response_schema/i, /responseSchema/, /response_mime_type/i];

/** What a refusal of status `status` with body `body` is about. */
export function classifyGeminiRefusal(status: number, body: string): Refusal {
  const error = parsedStatus(body);
  const message = (error ? wording(error) : body).trim().slice(0, 500);
  const out = (kind: RefusalKind): Refusal => ({ kind, status, message });
  const apiKeyInvalid = ofType(error, "ErrorInfo").some((info) => info.reason === "API_KEY_INVALID");
  if (status === 401 || status === 403 || status === 404 || status < 400) return out("route");
  if (apiKeyInvalid || KEY_WORDS.some((words) => words.test(message))) return out("route");
  if (CONTEXT_WORDS.some((words) => words.test(message))) return out("context_length");
  if (PARAMETER_WORDS.some((words) => words.test(message))) return out("unsupported_parameter");
  if (FORMAT_WORDS.some((words) => words.test(message))) return out("format");
  return out("request");
}

/**
 * Gemini's usageMetadata in medbench's token shape (src/model/price.ts): promptTokenCount holds the cached
 * content's tokens (cachedContentTokenCount) and any tool results' (toolUsePromptTokenCount); the output is
 * the candidates' tokens plus the thoughts' (thoughtsTokenCount), which Gemini bills as output and does
 * not count in candidatesTokenCount (https://ai.google.dev/api/generate-content#UsageMetadata).
 */
export function geminiTokens(usage: Json | undefined): Tokens | null {
  if (!isObj(usage)) return null;
  const count = (value: Json | undefined) =>
    typeof value === "number" && Number.isFinite(value) ? value : 0;
  if (typeof usage.promptTokenCount !== "number" && typeof usage.candidatesTokenCount !== "number")
    return null;
  const reasoning = count(usage.thoughtsTokenCount);
  return {
    prompt: count(usage.promptTokenCount) + count(usage.toolUsePromptTokenCount),
    completion: count(usage.candidatesTokenCount) + reasoning,
    reasoning,
    cached: count(usage.cachedContentTokenCount),
  };
}
