// How fast a route may send, learned from what happens, as TCP and adaptive clients learn it: additive
// increase on answers, multiplicative decrease on 429s (AIMD). A server's rate-limit headers are hints: a
// header-derived rate is taken at a 429, then checked against the 429s that follow; one that keeps
// producing them is cut like any other rate. The state is plain data so that builds of one machine can
// share it (src/model/pace-ledger.ts); every function here is pure apart from mutating the state given.

/** The cut at a 429 (the rate kept) when the rate held for HELD answers since the last cut; otherwise
 *  DEEP_CUT to the power of the cuts since a rate last held (the rate was far above the limit: found in a
 *  few 429s rather than many). A bucket refilling at f answers a rate r > f for about f / (r - f)
 *  requests: HELD answers tell a rate within about a tenth of the limit. */
const CUT = 0.8;
const DEEP_CUT = 0.5;
const HELD = 10;
/** Increases per answer, as a fraction of the rate that met the last 429: quick back to just below it,
 *  slow beyond (where the limit was). */
const QUICK = 1 / 50;
const SLOW = 1 / 1000;
const NEAR = 0.92;
/** After PROBE_ANSWERS answers with no 429, the rate that met the last one is probed past by this factor,
 *  then again every PROBE_AGAIN answers while no 429 comes: a probe costs about one 429 where the limit
 *  has not moved (the sawtooth's share of 429s), and a limit far above the pace is still found quickly. */
const PROBE = 1.1;
const PROBE_ANSWERS = 50;
const PROBE_AGAIN = 25;
/** A header-derived rate met by a 429 within this many answers is not trusted again (cut instead). */
const TRUST_ANSWERS = 50;
/** A header-derived rate is used at this fraction, so that a client's clock and the server's never race. */
export const HINT_MARGIN = 0.98;
/** The slowest pace learned: one request a minute (a route is never starved to nothing). */
const MIN_RATE = 1 / 60_000;

export interface PaceState {
  /** Requests per millisecond the route sends at; 0: nothing learned yet (no 429): sent as they come. */
  rate: number;
  /** The rate that met the last 429: increases are quick below it, slow beyond. */
  lastMax: number;
  /** The earliest moment the next request may go, and the end of a pause the server asked for. */
  nextAt: number;
  pausedUntil: number;
  /** Bumped at each cut: a 429 of a request let go before the cut was already answered by it. */
  epoch: number;
  /** Cuts since a rate last held for HELD answers. */
  inARow: number;
  /** Whether the rate was last set from a header, and the answers since the last cut (only of requests
   *  let go after it: one sent before says nothing of the rate now). */
  hinted: boolean;
  answers: number;
}

export const freshPace = (): PaceState => ({
  rate: 0,
  lastMax: 0,
  nextAt: 0,
  pausedUntil: 0,
  epoch: 0,
  inARow: 0,
  hinted: false,
  answers: 0,
});

/** The route's own caps: requests_per_minute and tokens_per_minute as milliseconds per request and token. */
export interface Declared {
  requestGapMs: number;
  tokenGapMs: number;
}

/** The time a request of `cost` estimated tokens holds the route before the next may go. */
export function spacingMs(state: PaceState, cost: number, declared: Declared): number {
  const learned = state.rate > 0 ? 1 / state.rate : 0;
  return Math.max(learned, declared.requestGapMs, cost * declared.tokenGapMs);
}

/** Whether a request may go now; when it may, its slot is taken (the next is spaced from now). The wait
 *  otherwise. Spacing from the moment one goes means a queue is never released as a burst after a pause. */
export function reserve(state: PaceState, now: number, cost: number, declared: Declared): number {
  const at = Math.max(state.nextAt, state.pausedUntil);
  if (at > now) return at - now;
  const spacing = spacingMs(state, cost, declared);
  // A turn taken late by less than a spacing (a timer fires late on a busy machine) keeps its slot, so that
  // lateness does not slow the route, yet the next is never closer than half a spacing; after an idle
  // moment the next is a whole spacing away.
  state.nextAt = now - at < spacing ? Math.max(at + spacing, now + spacing / 2) : now + spacing;
  return 0;
}

/** An answer that was not a 429 (whatever else it was) to a request let go in `epoch`: if in this one, the
 *  rate grows by its step, up to `most`. Returns whether the answer counted. */
export function answered(state: PaceState, most: number, epoch: number): boolean {
  if (epoch !== state.epoch) return false;
  state.answers++;
  if (state.answers >= HELD) state.inARow = 0;
  if (state.rate <= 0) return true;
  // A limit not met for a while may have risen (or a header's rate was below it): probed further.
  if (state.answers >= PROBE_ANSWERS && (state.answers - PROBE_ANSWERS) % PROBE_AGAIN === 0)
    state.lastMax = Math.max(state.lastMax, (state.rate / NEAR) * PROBE);
  const step = state.lastMax * (state.rate < state.lastMax * NEAR ? QUICK : SLOW);
  state.rate = Math.min(state.rate + step, Math.max(most, state.rate));
  return true;
}

/** What a 429 tells: the request's epoch and estimated tokens, the rate the route was sending at
 *  (measured), and the rates and wait the server's headers give, if any. */
export interface Refusal {
  epoch: number;
  cost: number;
  now: number;
  measuredRate: number;
  waitMs: number | null;
  requestsPerMs: number | null;
  tokensPerMs: number | null;
}

/** What a 429 did to the rate: nothing (already answered by a cut), a cut near a rate that was answered, or
 *  a cut from a rate not known to be near the limit (none learned yet, or no answer since the last cut). */
export type Cut = "none" | "near" | "lost";

/** A 429: the server's pause kept; the rate cut once per epoch (a 429 of a request sent before the last cut
 *  was already answered by it). */
export function limited(state: PaceState, refusal: Refusal): Cut {
  if (refusal.waitMs !== null) state.pausedUntil = Math.max(state.pausedUntil, refusal.now + refusal.waitMs);
  if (refusal.epoch !== state.epoch) return "none";
  const lost = state.rate <= 0 || state.inARow > 0;
  const base = state.rate > 0 ? state.rate : refusal.measuredRate;
  const cut = Math.max(MIN_RATE, base * (state.inARow > 0 ? DEEP_CUT ** Math.min(state.inARow, 4) : CUT));
  const hint = hintedRate(refusal);
  // A hint is taken unless the rate it set met this 429 soon after it was set.
  const trusted = hint !== null && !(state.hinted && state.answers < TRUST_ANSWERS);
  const rate = trusted && hint < base ? hint : hint !== null ? Math.min(hint, cut) : cut;
  state.hinted = trusted && hint < base;
  state.lastMax = state.hinted ? rate : base;
  state.rate = rate;
  state.answers = 0;
  state.inARow++;
  state.epoch++;
  // The next request goes one spacing after this refusal (a pause the server asked for may be longer).
  state.nextAt = Math.max(state.nextAt, refusal.now + 1 / rate);
  return lost ? "lost" : "near";
}

/** The request rate the headers allow: the requests' own, or the tokens' over this request's estimate. */
function hintedRate({ requestsPerMs, tokensPerMs, cost }: Refusal): number | null {
  const rates = [requestsPerMs, tokensPerMs && cost > 0 ? tokensPerMs / cost : null].filter((x) => !!x);
  return rates.length ? Math.min(...(rates as number[])) * HINT_MARGIN : null;
}
