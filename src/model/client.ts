// One OpenAI-compatible chat completion with retries: 429, 5xx, resets and timeouts are retried with
// exponential backoff and jitter (Retry-After honoured); other HTTP errors are refusals, returned as such.
import seedrandom from "seedrandom";
import type { Route } from "./registry.js";
import type { Json } from "../util/json.js";

export type CallOutcome =
  | { kind: "reply"; status: number; body: Json; attempts: number }
  | { kind: "refused"; status: number; body: string; attempts: number } // non-transient: the request itself is rejected
  | { kind: "failed"; error: string; attempts: number }; // transient errors until the retry budget ran out

const jitter = seedrandom("medbench-retry-jitter");

export interface CallHooks {
  onRetry?: (why: string) => void;
}

export async function chatCompletion(
  route: Route,
  body: Json,
  apiKey: string | undefined,
  hooks: CallHooks = {},
): Promise<CallOutcome> {
  const url = route.base_url.replace(/\/$/, "") + "/chat/completions";
  const headers: Record<string, string> = { "content-type": "application/json", ...(route.headers ?? {}) };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const started = Date.now();
  let lastError = "";
  for (let attempt = 1; attempt <= route.retry.max_attempts; attempt++) {
    let waitMs: number | null = null;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(route.timeout_s * 1000),
      });
      const text = await res.text();
      if (res.ok) {
        try {
          const parsed = JSON.parse(text) as Json;
          if (
            parsed &&
            typeof parsed === "object" &&
            !Array.isArray(parsed) &&
            Array.isArray((parsed as { choices?: unknown }).choices)
          ) {
            return { kind: "reply", status: res.status, body: parsed, attempts: attempt };
          }
          lastError = "malformed response body (no choices)";
        } catch {
          lastError = "malformed response body (not JSON)";
        }
      } else if (res.status === 429 || res.status === 408 || res.status >= 500) {
        lastError = `HTTP ${res.status}`;
        waitMs = retryAfterMs(res.headers.get("retry-after"));
      } else {
        return { kind: "refused", status: res.status, body: text.slice(0, 2000), attempts: attempt };
      }
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      lastError =
        err.name === "TimeoutError" || err.name === "AbortError"
          ? `timeout after ${route.timeout_s} s`
          : `connection error (${err.cause?.code ?? err.message})`;
    }
    if (attempt === route.retry.max_attempts) break;
    const backoff = Math.min(route.retry.max_ms, route.retry.base_ms * 2 ** (attempt - 1)) * (0.5 + jitter());
    const delay = Math.max(waitMs ?? 0, backoff);
    if (Date.now() - started + delay > route.retry.max_total_s * 1000) break;
    hooks.onRetry?.(lastError);
    await new Promise((r) => setTimeout(r, delay));
  }
  return { kind: "failed", error: lastError, attempts: route.retry.max_attempts };
}

function retryAfterMs(h: string | null): number | null {
  if (!h) return null;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(h);
  return Number.isFinite(t) ? Math.max(0, t - Date.now()) : null;
}
