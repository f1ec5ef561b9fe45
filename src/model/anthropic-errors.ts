// What an error reply of Anthropic's Messages API means, as Anthropic words it. Shape: {"type": "error",
// "error": {"type", "message", "details"?}, "request_id"} (docs.anthropic.com/en/api/errors, now
// platform.claude.com/docs/en/api/errors). 408, 409, 429 and 5xx are tried again as the SDK does
// (anthropic-sdk-typescript at bfa9197, src/client.ts shouldRetry), 529 overloaded_error among them; a 429
// waits for retry-after, else the anthropic-ratelimit-* reset of the limit it hit
// (docs/en/api/rate-limits).
// A spend limit or an empty balance stops the route at once, in the provider's words (waiting does not
// help); "prompt is too long" is the item's final context-length refusal.
import type { IncomingHttpHeaders } from "node:http";
import type { ErrorReading, ErrorReply } from "./protocol.js";
import type { Refusal, RefusalKind } from "./refusal.js";
import { isTransient, retryAfterMs, type RateAdvice } from "./rate-limit.js";

interface AnthropicError {
  type: string | null;
  message: string;
  /** error.details.error_code, when the API gives one (enforced_spend_limit_reached). */
  code: string | null;
}

const MESSAGE_CHARS = 500;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null);

/** The error's type, message and code; a body that is not Anthropic's error shape is its own message. */
export function errorOf(body: string): AnthropicError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    /* not JSON (a proxy's page): the text is the message */
  }
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : {};
  const details = isRecord(error.details) ? error.details : {};
  return {
    type: text(error.type),
    message: (text(error.message) ?? body).trim().slice(0, MESSAGE_CHARS),
    code: text(details.error_code),
  };
}

// A limit the account or its workspace reached, or its balance: no request of the route can be answered
// until someone raises it. 429 with details.error_code enforced_spend_limit_reached (the tier's monthly cap,
// sent without retry-after) and 400 "You have reached your specified (workspace) API usage limits" (a limit
// set in the Console): platform.claude.com/docs/en/api/errors. 400 "Your credit balance is too low to access
// the Anthropic API" (quoted from the API in anthropics/claude-code#4684). 402 billing_error (ibid., the
// list of error types).
const SPEND_WORDS = [/reached your specified (workspace )?API usage limits/i, /credit balance is too low/i];

/** Why the route cannot be used until a limit is raised, or null for any other error. */
export function spendLimit(status: number, error: AnthropicError): string | null {
  const spent =
    error.code === "enforced_spend_limit_reached" ||
    status === 402 ||
    error.type === "billing_error" ||
    (status === 400 && SPEND_WORDS.some((words) => words.test(error.message)));
  if (!spent) return null;
  return (
    `the provider says the account cannot be used now (HTTP ${status} ` +
    `${error.code ?? error.type ?? "error"}: ${error.message}): a spend limit or billing problem, not a ` +
    "rate limit, so waiting will not help; raise or remove the limit (or add credit) " +
    "in the Claude Console, " +
    "or use another key"
  );
}

/** The error reading of the protocol: a spend limit stops the route, transient statuses are tried again. */
export function anthropicError({ status, headers, text: body }: ErrorReply, tokens: number): ErrorReading {
  const why = spendLimit(status, errorOf(body));
  if (why !== null) return { kind: "stop_route", why };
  if (!isTransient(status)) return { kind: "refused" };
  return { kind: "retry", rateLimited: status === 429, advice: anthropicAdvice(headers, tokens) };
}

/** One limit of the anthropic-ratelimit-* headers: its size, what is left, the time until it is full. */
interface Limit {
  limit: number | null;
  remaining: number | null;
  resetMs: number;
}

/** anthropic-ratelimit-<kind>-{limit,remaining,reset}: reset is an RFC 3339 time
 *  (docs/en/api/rate-limits). */
function limitOf(headers: IncomingHttpHeaders, kind: string, now: number): Limit | null {
  const value = (name: string) => {
    const got = headers[`anthropic-ratelimit-${kind}-${name}`];
    return typeof got === "string" ? got : undefined;
  };
  const reset = Date.parse(value("reset") ?? "");
  if (!Number.isFinite(reset)) return null;
  const number = (name: string) => {
    const parsed = Number(value(name) ?? NaN);
    return Number.isFinite(parsed) && parsed >= 0 ? parsed : null;
  };
  return { limit: number("limit"), remaining: number("remaining"), resetMs: Math.max(0, reset - now) };
}

// Anthropic's limits are per minute: a reset further ahead is a clock apart from ours, not a rate to pace
// at.
const LONGEST_RESET_MS = 120_000;

/** What a limit gives back per millisecond: the part used comes back by its reset. */
function refillPerMs(limit: Limit): number | null {
  if (limit.limit === null || limit.remaining === null) return null;
  if (limit.resetMs <= 0 || limit.resetMs > LONGEST_RESET_MS) return null;
  const used = limit.limit - limit.remaining;
  return used > 0 ? used / limit.resetMs : null;
}

const exhausted = (limit: Limit | null, need: number): limit is Limit =>
  limit !== null && (limit.remaining === null || limit.remaining < need);

/**
 * A rate-limited reply's advice: the wait is retry-after ("the number of seconds to wait"), else the reset
 * of the limits the request cannot pass (requests; input tokens, or tokens on older accounts); the rates
 * are those limits' refill.
 */
export function anthropicAdvice(headers: IncomingHttpHeaders, tokens: number, now = Date.now()): RateAdvice {
  const requests = limitOf(headers, "requests", now);
  const input = limitOf(headers, "input-tokens", now) ?? limitOf(headers, "tokens", now);
  const hit = [exhausted(requests, 1) ? requests : null, exhausted(input, tokens) ? input : null].filter(
    (limit): limit is Limit => limit !== null,
  );
  const resetWait = hit.length ? Math.max(...hit.map((limit) => limit.resetMs)) : null;
  return {
    waitMs: retryAfterMs(headers, now) ?? resetWait,
    requestsPerMs: exhausted(requests, 1) ? refillPerMs(requests) : null,
    tokensPerMs: exhausted(input, tokens) ? refillPerMs(input) : null,
  };
}

// The item's own length: "prompt is too long: 211180 tokens > 200000 maximum" (400 invalid_request_error,
// quoted from the API in anthropics/claude-code#62560); "input length and `max_tokens` exceed context
// limit"; 413 request_too_large (past 32 MB, docs/en/api/errors).
const CONTEXT_WORDS = [/prompt is too long/i, /exceed context limit/i];
// A refusal of the reply schema's means: a forced tool, a tool's input_schema, structured output.
const FORMAT_WORDS = [/\btool_choice\b/i, /\binput_schema\b/i, /\boutput_config\b/i, /\boutput_format\b/i];
// A field the model does not take ("temperature and top_p cannot both be specified for this model",
// "...: Extra inputs are not permitted", as the API words a field it does not know).
const PARAMETER_WORDS = [/extra inputs are not permitted/i, /cannot both be specified/i, /not supported/i];

/** What a refusal is about: the key, permission or model (the route's), the item's length, the schema's
 *  means, a field, or the request (one we cannot read). */
export function anthropicRefusal(status: number, body: string): Refusal {
  const error = errorOf(body);
  const out = (kind: RefusalKind): Refusal => ({ kind, status, message: error.message });
  if (status === 401 || status === 403 || status === 404 || status < 400) return out("route");
  if (spendLimit(status, error) !== null) return out("route");
  if (status === 413 || CONTEXT_WORDS.some((words) => words.test(error.message)))
    return out("context_length");
  if (FORMAT_WORDS.some((words) => words.test(error.message))) return out("format");
  if (PARAMETER_WORDS.some((words) => words.test(error.message))) return out("unsupported_parameter");
  return out("request");
}
