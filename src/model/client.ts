// One OpenAI-compatible chat completion with retries: 408, 409, 429, 5xx, resets, timeouts and successes
// that are no reply (malformed, or an error reported in a 200: src/model/reply.ts) are retried with
// exponential backoff and jitter (the server's wait honoured: retry-after-ms, Retry-After, OpenAI's
// x-ratelimit-reset-*, src/model/rate-limit.ts); other HTTP errors are refusals, returned as such. Each
// request has one deadline (retry.max_total_s) that its tries and the waits between
// them share. Whatever the server sends back is redacted of secrets before it leaves this module.
import type { Route } from "./registry.js";
import type { Json } from "../util/json.js";
import { redact, redactJson } from "./redact.js";
import { successBody } from "./reply.js";
import { agentFor, postJson, targetOf, type HttpError, type Target } from "./http.js";
import { backoffMs, isTransient, quotaProblem, rateAdvice } from "./rate-limit.js";
import { estimatedTokens, pacerFor } from "./pacer.js";

export type CallOutcome =
  | { kind: "reply"; status: number; body: Json; attempts: number }
  // non-transient: the request itself is rejected (stopsRoute: why no request of the route can succeed)
  | { kind: "refused"; status: number; body: string; attempts: number; stopsRoute?: string }
  // transient errors until the deadline or tries ran out (timedOut: the last try got no answer in time)
  | { kind: "failed"; error: string; attempts: number; timedOut?: boolean }
  // the caller stopped it (the route is failing): not sent, not an error
  | { kind: "cancelled"; attempts: number };

export interface CallHooks {
  onRetry?: (why: string) => void;
  /** Values to redact from everything the server sends back (the route's key, header values). */
  secrets?: readonly string[];
  /** Aborts the request and its waits (the stage stops). */
  signal?: AbortSignal;
  /** The body already serialised (the bytes its key was hashed from), sent as it is. */
  payload?: Buffer;
}

/** The chat completions URL under a base URL, a query (a gateway's key: a secret) kept after the path. */
function completionsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = url.pathname.replace(/\/$/, "") + "/chat/completions";
  return url;
}

interface Prepared {
  base_url: string;
  headersIn: Route["headers"];
  apiKey: string | undefined;
  secretsIn: readonly string[] | undefined;
  target: Target;
  secrets: string[];
}
const preparedRoutes = new WeakMap<Route, Prepared>();

/** The route's URL, headers, agent and secrets, built once per route (not per request) for a key. */
function prepared(route: Route, apiKey: string | undefined, secretsIn?: readonly string[]): Prepared {
  const had = preparedRoutes.get(route);
  const same = had?.base_url === route.base_url && had.headersIn === route.headers && had.apiKey === apiKey;
  if (same && had.secretsIn === secretsIn) return had;
  const url = completionsUrl(route.base_url_with_secrets ?? route.base_url);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "medbench",
    ...(route.headers ?? {}),
  };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const secrets = [...(secretsIn ?? []), ...(apiKey ? [apiKey] : [])];
  const made = {
    base_url: route.base_url,
    headersIn: route.headers,
    apiKey,
    secretsIn,
    target: { ...targetOf(url, headers, agentFor(route)), maxReplyBytes: route.max_reply_mb * 2 ** 20 },
    secrets,
  };
  preparedRoutes.set(route, made);
  return made;
}

export async function chatCompletion(
  route: Route,
  body: Json,
  apiKey: string | undefined,
  hooks: CallHooks = {},
): Promise<CallOutcome> {
  const { target, secrets } = prepared(route, apiKey, hooks.secrets);
  const payload = hooks.payload ?? Buffer.from(JSON.stringify(body), "utf8");
  const pacer = pacerFor(route);
  const tokens = estimatedTokens(payload, body);
  const deadline = Date.now() + route.retry.max_total_s * 1000;
  const remaining = () => deadline - Date.now();
  let lastError = "";
  let timedOut = false;
  let attempt = 0; // tries sent
  let spent = 0; // tries that count against max_attempts: all but 429s
  let limitedTries = 0;
  while (spent < route.retry.max_attempts) {
    if (hooks.signal?.aborted) return { kind: "cancelled", attempts: attempt };
    if (!pacer.free) {
      // The route is paused or paced: this request waits its turn, within its deadline.
      const turn = await pacer.turn(tokens, deadline, hooks.signal);
      if (turn === "aborted") return { kind: "cancelled", attempts: attempt };
      if (turn === "late") {
        lastError ||= "rate limited: the route's pause outlasted the request's deadline";
        break;
      }
    }
    const budget = Math.min(route.timeout_s * 1000, remaining());
    if (budget <= 0) break;
    attempt++;
    spent++;
    let waitMs: number | null = null;
    let limited = false;
    timedOut = false;
    try {
      const res = await postJson(target, payload, budget, hooks.signal);
      const text = res.text;
      if (res.status !== 429) pacer.settled();
      if (res.status >= 200 && res.status < 300) {
        const success = successBody(text, res.contentType);
        if ("body" in success)
          return {
            kind: "reply",
            status: res.status,
            body: redactJson(success.body, secrets),
            attempts: attempt,
          };
        lastError = success.problem; // an error in a 200 too: a failed try, redacted below
      } else if (quotaProblem(res.status, text) !== null) {
        const why = redact(quotaProblem(res.status, text)!, secrets);
        return {
          kind: "refused",
          status: res.status,
          body: redact(text, secrets).slice(0, 2000),
          attempts: attempt,
          stopsRoute:
            `the provider says the account is out of quota (HTTP 429 insufficient_quota: ${why.slice(0, 300)}): ` +
            "a billing problem, not a rate limit, so waiting will not help; add credit or raise the " +
            "account's spending limit, or use another key",
        };
      } else if (isTransient(res.status)) {
        lastError = `HTTP ${res.status}`;
        const advice = rateAdvice(res.headers, tokens);
        waitMs = advice.waitMs;
        if (waitMs !== null && waitMs > remaining()) {
          // Waiting would pass the deadline: a failure now, which the next build sends again.
          lastError += ` asking to wait ${Math.round(waitMs / 1000)} s, beyond the request's deadline`;
          break;
        }
        if (res.status === 429) {
          // A rate limit pauses the whole route, and spends none of this request's tries.
          limited = true;
          spent--;
          pacer.limited(waitMs ?? backoffMs(route.retry, ++limitedTries), advice);
        }
      } else {
        // A redirect is not followed (a POST must not quietly become a GET): the route names the server.
        const moved = res.location ? `redirected to ${res.location}; set the route's base_url to it. ` : "";
        return {
          kind: "refused",
          status: res.status,
          body: redact(moved + text, secrets).slice(0, 2000),
          attempts: attempt,
        };
      }
    } catch (e) {
      if (hooks.signal?.aborted) return { kind: "cancelled", attempts: attempt };
      pacer.settled();
      const err = e as HttpError;
      timedOut = err.why === "timeout";
      lastError =
        err.why === "timeout"
          ? `timeout after ${Math.round(budget) / 1000} s`
          : err.why === "too_large"
            ? tooLargeError(route)
            : `connection error (${err.code ?? err.message})`;
    }
    if (spent === route.retry.max_attempts) break;
    if (limited) {
      hooks.onRetry?.(redact(lastError, secrets));
      continue; // the pacer holds the next try until the route may send again
    }
    const delay = Math.max(waitMs ?? 0, backoffMs(route.retry, spent));
    if (delay >= remaining()) break;
    hooks.onRetry?.(redact(lastError, secrets));
    if (!(await sleep(delay, hooks.signal))) return { kind: "cancelled", attempts: attempt };
  }
  return {
    kind: "failed",
    error: redact(lastError || "no time left for a try", secrets),
    attempts: attempt,
    ...(timedOut ? { timedOut } : {}),
  };
}

/** A reply past the route's size limit: what happened and the field that allows more. */
function tooLargeError(route: Route): string {
  const bytes = Math.floor(route.max_reply_mb * 2 ** 20);
  return (
    `reply body larger than the route's max_reply_mb (${route.max_reply_mb} MiB, ${bytes} bytes); ` +
    `not read further; raise max_reply_mb in route ${route.name} if such replies are expected`
  );
}

/** Waits, unless the signal fires first (then false). */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
