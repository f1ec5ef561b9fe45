// A route's sending pace, shared by all its requests in this process: a 429 pauses the route (not only the
// request that got it) until the time the server allows, and its requests then go out one at a time at the
// rate the server allows (learned from its rate-limit headers) or the route declares (requests_per_minute,
// tokens_per_minute), never faster. Without a known rate, the first request after a pause goes alone and the
// rest follow once it has an answer, so a route does not send its whole concurrency into a refilling limit.
import type { Route } from "./registry.js";

/** A learned rate is used at this fraction, so that a client's clock and the server's never race. */
const LEARNED_MARGIN = 0.98;
const MAX_TIMER_MS = 2 ** 31 - 1;

export type Turn = "go" | "late" | "aborted";

interface Waiter {
  cost: number;
  deadline: number;
  resolve: (turn: Turn) => void;
  forget: () => void;
}

export class Pacer {
  /** Milliseconds between requests and per estimated token (0: no limit), the declared ones a floor. */
  private requestGapMs: number;
  private tokenGapMs: number;
  private pausedUntil = 0;
  private nextAt = 0;
  private probing = false;
  private probeOut = false;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly declared: { requestsPerMinute?: number; tokensPerMinute?: number } = {},
    private readonly now: () => number = Date.now,
  ) {
    this.requestGapMs = declared.requestsPerMinute ? 60_000 / declared.requestsPerMinute : 0;
    this.tokenGapMs = declared.tokensPerMinute ? 60_000 / declared.tokensPerMinute : 0;
  }

  /** Nothing to wait for: no pause, no pace, nobody queued (the common case costs no promise). */
  get free(): boolean {
    return (
      !this.requestGapMs &&
      !this.tokenGapMs &&
      !this.probing &&
      this.queue.length === 0 &&
      this.now() >= this.pausedUntil
    );
  }

  /** Waits for the route's turn to send a request of `cost` estimated tokens; "late" past `deadline`. */
  turn(cost: number, deadline: number, signal?: AbortSignal): Promise<Turn> {
    if (signal?.aborted) return Promise.resolve("aborted");
    return new Promise((resolve) => {
      const waiter: Waiter = { cost, deadline, resolve, forget: () => {} };
      const leave = (turn: Turn) => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        waiter.forget();
        resolve(turn);
      };
      const onAbort = () => leave("aborted");
      // A deadline past a timer's range (about 24.8 days) is never met while waiting: no timer, which Node
      // would otherwise fire at once.
      const left = Math.max(0, deadline - this.now());
      const late = left <= MAX_TIMER_MS ? setTimeout(() => leave("late"), left) : undefined;
      signal?.addEventListener("abort", onAbort, { once: true });
      waiter.forget = () => {
        clearTimeout(late);
        signal?.removeEventListener("abort", onAbort);
      };
      waiter.resolve = (turn) => {
        waiter.forget();
        resolve(turn);
      };
      this.queue.push(waiter);
      this.pump();
    });
  }

  /**
   * A 429: no request goes before `waitMs` from now; the rates the server gave (per millisecond) pace the
   * route from then on, never above the declared ones. Without any rate, the next request goes alone.
   */
  limited(waitMs: number, rates: { requestsPerMs: number | null; tokensPerMs: number | null }): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + waitMs);
    if (rates.requestsPerMs)
      this.requestGapMs = Math.max(this.declaredGap("requests"), 1 / (rates.requestsPerMs * LEARNED_MARGIN));
    if (rates.tokensPerMs)
      this.tokenGapMs = Math.max(this.declaredGap("tokens"), 1 / (rates.tokensPerMs * LEARNED_MARGIN));
    this.probing = !this.requestGapMs && !this.tokenGapMs;
    this.probeOut = false;
    this.restart();
  }

  /** A try ended without a 429: a probe's answer lets the others go. */
  settled(): void {
    if (!this.probing) return;
    this.probing = false;
    this.probeOut = false;
    this.pump();
  }

  private declaredGap(kind: "requests" | "tokens"): number {
    const perMinute = kind === "requests" ? this.declared.requestsPerMinute : this.declared.tokensPerMinute;
    return perMinute ? 60_000 / perMinute : 0;
  }

  private restart(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pump();
  }

  /** Lets the waiters go in order, each at the first moment the pause, the pace and a probe allow. */
  private pump(): void {
    if (this.timer) return;
    while (this.queue.length > 0) {
      if (this.probing && this.probeOut) return; // settled() or limited() pumps again
      const now = this.now();
      const at = Math.max(this.pausedUntil, this.nextAt);
      if (at > now) {
        this.timer = setTimeout(
          () => {
            this.timer = null;
            this.pump();
          },
          Math.min(at - now, MAX_TIMER_MS),
        );
        return;
      }
      const waiter = this.queue.shift()!;
      // Spaced from the moment it goes, so that a late timer never sends two at once.
      this.nextAt = now + Math.max(this.requestGapMs, waiter.cost * this.tokenGapMs);
      if (this.probing) this.probeOut = true;
      waiter.resolve("go");
    }
  }
}

const pacers = new Map<string, Pacer>();

/** The route's pacer in this process (one per route name and URL, as its connection pool). */
export function pacerFor(route: Route): Pacer {
  const id = `${route.name}\n${route.base_url}`;
  let pacer = pacers.get(id);
  if (!pacer) {
    pacer = new Pacer({
      requestsPerMinute: route.requests_per_minute ?? undefined,
      tokensPerMinute: route.tokens_per_minute ?? undefined,
    });
    pacers.set(id, pacer);
  }
  return pacer;
}

/**
 * A request's tokens as a rate limit counts them, estimated before it is sent: its body's bytes over four
 * (OpenAI's rule of thumb for English text) plus the most it may generate.
 */
export function estimatedTokens(payload: Buffer, body: unknown): number {
  const fields = (body ?? {}) as { max_tokens?: unknown; max_completion_tokens?: unknown };
  const most = [fields.max_completion_tokens, fields.max_tokens].find((x) => typeof x === "number");
  return Math.ceil(payload.length / 4) + ((most as number | undefined) ?? 0);
}
