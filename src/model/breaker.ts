// Stops a stage whose route keeps failing (a dead server, a refused key) instead of spending every request's
// deadline on it: after N requests in a row without an answer, the requests in flight are cancelled and no
// more are sent. Replies already received stay in the memo, so the next build continues from there.
// A route that stalls on some of its requests (a third hang, the rest answer) never fails N in a row, yet
// costs a deadline per stalled request: timeouts are counted apart, and when N of them have happened and
// they are at least a fifth of the requests finished, the route is stalled and stops the same way.
import { defaultMaxListeners, setMaxListeners } from "node:events";
import type { CallOutcome } from "./client.js";
import { countsAgainstRoute, type Refusal } from "./refusal.js";

export class RouteBreaker {
  private inARow = 0;
  private timeouts = 0;
  private finished = 0;
  private stalled = false;
  private fatal: string | null = null;
  private last = "";
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;

  /**
   * `concurrency`: the route's requests in flight. The tries being sent share one "abort" listener on
   * `signal` (src/model/http.ts); a request waiting to retry holds one of its own until its wait ends
   * (src/model/client.ts), so the signal has at most `concurrency` + 1 listeners by construction, not a
   * leak.
   * Node warns past 10 listeners ("possible memory leak"); the limit is that bound, so that a real leak past
   * it would still be reported.
   */
  /** `refusal`: what a refusal is about, as the route's protocol reads it. */
  constructor(
    private readonly limit: number,
    concurrency: number,
    private readonly refusal: (status: number, body: string) => Refusal,
  ) {
    setMaxListeners(Math.max(defaultMaxListeners, concurrency + 1), this.signal);
  }

  get tripped(): boolean {
    return this.signal.aborted;
  }

  /** Counts a request's outcome: a failure or a refusal of the route adds one; an answer, or a final refusal
   *  of the item (its length, a parameter), resets the count. */
  record(outcome: CallOutcome): void {
    if (outcome.kind === "cancelled" || this.tripped) return;
    this.finished++;
    if (outcome.kind === "refused" && outcome.stopsRoute) {
      // No request of the route can succeed (e.g. a billing problem): stopped at the first.
      this.fatal = outcome.stopsRoute;
      return this.controller.abort();
    }
    // A refused key, model or URL (or a refusal we cannot read): every request may be refused alike.
    const refused =
      outcome.kind === "refused" && countsAgainstRoute(this.refusal(outcome.status, outcome.body));
    if (outcome.kind === "failed" || refused) {
      this.inARow++;
      this.last =
        outcome.kind === "failed" ? outcome.error : `HTTP ${outcome.status}: ${outcome.body.slice(0, 200)}`;
      if (this.inARow >= this.limit) return this.controller.abort();
    } else this.inARow = 0;
    if (outcome.kind === "failed" && outcome.timedOut) {
      this.timeouts++;
      if (this.timeouts >= this.limit && this.timeouts * 5 >= this.finished) {
        this.stalled = true;
        this.controller.abort();
      }
    }
  }

  /** Stops the route for a reason of the build's own (its spending limit reached): no more requests. */
  stop(why: string): void {
    if (this.tripped) return;
    this.fatal = why;
    this.controller.abort();
  }

  /** What happened, for the stage's error. */
  why(): string {
    if (this.fatal) return this.fatal;
    if (this.stalled)
      return (
        `the route stalls: ${this.timeouts} of ${this.finished} requests got no answer within their ` +
        `deadline (the last: ${this.last})`
      );
    return `${this.limit} requests in a row failed (the last: ${this.last})`;
  }
}
