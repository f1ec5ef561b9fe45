// What a server's reply says about waiting: which statuses are transient, how long to wait before the next
// request (retry-after-ms, Retry-After, OpenAI's x-ratelimit-reset-*), and the rates it allows when a
// rate limit was hit, whether a 429 is a billing problem (OpenAI's insufficient_quota) rather than a rate
// limit, and the backoff when the server says nothing.
import type { IncomingHttpHeaders } from "node:http";

/** Retried like openai-node's client does: 408 (timeout), 409 (lock), 429 (rate limit) and 5xx. */
export const isTransient = (status: number): boolean =>
  status === 408 || status === 409 || status === 429 || status >= 500;

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
};

/**
 * A Go-style duration as OpenAI writes its reset headers ("1s", "6m0s", "20ms", "1h2m3.5s"), or a bare
 * number of seconds; null when it is neither.
 */
export function durationMs(text: string): number | null {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const unitMs: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001 };
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|h|m|s)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join("") !== trimmed) return null;
  return parts.reduce((sum, part) => sum + Number(part[1]) * unitMs[part[2]!]!, 0);
}

/** One limit of OpenAI's x-ratelimit-* headers: its size, what is left, and the time until it is full. */
interface Limit {
  limit: number | null;
  remaining: number | null;
  resetMs: number;
}

function limitOf(headers: IncomingHttpHeaders, kind: "requests" | "tokens"): Limit | null {
  const reset = header(headers, `x-ratelimit-reset-${kind}`);
  const resetMs = reset === undefined ? null : durationMs(reset);
  if (resetMs === null) return null;
  const number = (name: string) => {
    const parsed = Number(header(headers, `x-ratelimit-${name}-${kind}`) ?? NaN);
    return Number.isFinite(parsed) && parsed >= 0 ? parsed : null;
  };
  return { limit: number("limit"), remaining: number("remaining"), resetMs };
}

/** What a limit refills per millisecond: the part used (limit - remaining) comes back over its reset
 *  time. */
function refillPerMs(limit: Limit): number | null {
  if (limit.limit === null || limit.remaining === null || limit.resetMs <= 0) return null;
  const used = limit.limit - limit.remaining;
  return used > 0 ? used / limit.resetMs : null;
}

/** Whether a request of `need` units cannot pass this limit now (unknown remaining: assumed exhausted). */
const exhausted = (limit: Limit, need: number) => limit.remaining === null || limit.remaining < need;

/** The time until `need` units are back, or the whole reset when the refill rate is not known. */
function waitFor(limit: Limit, need: number): number {
  const rate = refillPerMs(limit);
  return rate === null ? limit.resetMs : Math.min(limit.resetMs, (need - (limit.remaining ?? 0)) / rate);
}

export interface RateAdvice {
  /** How long the server asks to wait, or null when it does not say. */
  waitMs: number | null;
  /** The rates the server allows, per millisecond, for the limits this reply shows exhausted. */
  requestsPerMs: number | null;
  tokensPerMs: number | null;
}

/**
 * A rate-limited reply's advice for a request estimated at `tokens` tokens. The wait: retry-after-ms, then
 * Retry-After (seconds or an HTTP date), as openai-node reads them; failing both, OpenAI's reset headers of
 * the limits the request cannot pass, each shortened to the time until the request fits when the limit,
 * what remains and the reset give the refill rate.
 */
export function rateAdvice(headers: IncomingHttpHeaders, tokens: number, now = Date.now()): RateAdvice {
  const requests = limitOf(headers, "requests");
  const tokenLimit = limitOf(headers, "tokens");
  const hit = [
    requests && exhausted(requests, 1) ? ([requests, 1] as const) : null,
    tokenLimit && exhausted(tokenLimit, tokens) ? ([tokenLimit, tokens] as const) : null,
  ].filter((x) => x !== null);
  // Neither limit shows exhausted: the larger wait of those given, as a limit the reply does not name may
  // be.
  const considered = hit.length
    ? hit
    : [requests, tokenLimit].flatMap((limit) => (limit ? [[limit, 1] as const] : []));
  const resetWait = considered.length
    ? Math.max(...considered.map(([limit, need]) => waitFor(limit, need)))
    : null;
  return {
    waitMs: retryAfterMs(headers, now) ?? resetWait,
    requestsPerMs: requests && exhausted(requests, 1) ? refillPerMs(requests) : null,
    tokensPerMs: tokenLimit && exhausted(tokenLimit, tokens) ? refillPerMs(tokenLimit) : null,
  };
}

/** retry-after-ms (milliseconds), then Retry-After (seconds, or an HTTP date); null without either. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | null {
  const ms = Number.parseFloat(header(headers, "retry-after-ms") ?? "");
  if (Number.isFinite(ms)) return Math.max(0, ms);
  const after = header(headers, "retry-after");
  if (!after) return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(after);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}
/**
 * A billing stop, which no wait cures: OpenAI's 429 insufficient_quota (error code or type), or a 402
 * Payment Required (OpenRouter: "Your account or API key has insufficient credits",
 * https://openrouter.ai/docs/errors). What the provider says (status, code, message), or null for any other
 * reply.
 */
export function quotaProblem(status: number, text: string): string | null {
  const error = errorObject(text);
  if (status === 402) {
    const message = typeof error?.message === "string" ? error.message : text.slice(0, 300);
    return `HTTP 402: ${message || "payment required"}`;
  }
  if (status !== 429 || !text.includes("insufficient_quota")) return null;
  if (error?.code !== "insufficient_quota" && error?.type !== "insufficient_quota") return null;
  return `HTTP 429 insufficient_quota: ${typeof error.message === "string" ? error.message : ""}`.trim();
}

type ErrorObject = { code?: unknown; type?: unknown; message?: unknown; metadata?: unknown };

/** The `error` object of an error body, or null when the body has none. */
function errorObject(text: string): ErrorObject | null {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    return error !== null && typeof error === "object" ? (error as ErrorObject) : null;
  } catch {
    return null;
  }
}

/** A wait a 429's body gives, in milliseconds from `now`, where a provider puts it there rather than in a
 *  header; each reader is one provider's shape (null: not its shape). */
type BodyWait = (error: ErrorObject, now: number) => number | null;

/** OpenRouter's: the upstream limiter's headers copied into error.metadata.headers, X-RateLimit-Reset in
 *  epoch milliseconds (https://openrouter.ai/docs/api-reference/limits). */
const openRouterReset: BodyWait = (error, now) => {
  const headers = (error.metadata as { headers?: Record<string, unknown> } | undefined)?.headers;
  const reset = Number(headers?.["X-RateLimit-Reset"] ?? headers?.["x-ratelimit-reset"] ?? NaN);
  if (!Number.isFinite(reset) || reset <= 0) return null;
  const at = reset < 1e11 ? reset * 1000 : reset; // epoch seconds, from a gateway that writes those
  return Math.max(0, at - now);
};

/** The readers tried in turn; a protocol with its own shape (Gemini's RetryInfo.retryDelay) adds one. */
export const BODY_WAITS: BodyWait[] = [openRouterReset];

/** The wait a 429's body gives, or null. */
export function bodyWaitMs(text: string, now = Date.now()): number | null {
  const error = errorObject(text);
  if (!error) return null;
  for (const read of BODY_WAITS) {
    const wait = read(error, now);
    if (wait !== null) return wait;
  }
  return null;
}

/**
 * The exponential backoff before try n + 1, with jitter drawn by each process for itself: shards and
 * parallel builds that failed together must not retry together.
 */
export function backoffMs(retry: { base_ms: number; max_ms: number }, attempt: number): number {
  return Math.min(retry.max_ms, retry.base_ms * 2 ** (attempt - 1)) * (0.5 + Math.random());
}
