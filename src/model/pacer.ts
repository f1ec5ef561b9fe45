// A route's sending pace, shared by all its requests in this process (and, through a ledger file, by the
// builds of this machine that send to it): requests wait their turn in order, each spaced from the one
// before at the pace learned from 429s (src/model/pace.ts), never faster than the route declares
// (requests_per_minute, tokens_per_minute), and never more in flight than the concurrency window, which
// shrinks on 429s and grows on answers as the rate does. Before any 429 a route sends as fast as its
// concurrency allows. A 429 from a rate not known to be near the limit (the first, or one with no answer
// since the last cut) closes the window to one request, as TCP does on a timeout: the next goes only when
// the one before is answered, so that a rate still far too fast costs one 429 per cut, not a window's
// worth; answers then open it by one each (slow start) up to the window kept before, and slowly beyond.
import type { Route } from "./registry.js";
import { answered, limited, reserve, type Cut, type Declared } from "./pace.js";
import { LedgerPace, MemoryPace, ledgerName, type PaceStore } from "./pace-ledger.js";

const MAX_TIMER_MS = 2 ** 31 - 1;
/** Releases kept to measure the rate the route sends at. */
const SAMPLE = 32;
/** The concurrency window's cut at a 429 that cut the rate. */
const WINDOW_CUT = 0.85;

/** A request let go: the pace's epoch at that moment and its estimated tokens, given back with its end. */
export interface Ticket {
  epoch: number;
  cost: number;
}
export type Turn = Ticket | "late" | "aborted";

interface Waiter {
  cost: number;
  queuedAt: number;
  resolve: (turn: Turn) => void;
}

/** What the rate limits did to a route's requests in this process, for the terminal. */
export interface PaceReport {
  sent: number;
  limited: number;
  /** Milliseconds during which requests were waiting for their turn, and from the first send to the last. */
  queuedMs: number;
  spanMs: number;
  /** The pace at the end, requests per minute (0: none learned). */
  perMinute: number;
}

export class Pacer {
  private readonly declared: Declared;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private pumping = false;
  private again = false;
  private inFlight = 0;
  private window = Infinity;
  /** The window below which answers open it by one each (slow start), as TCP's ssthresh. */
  private threshold = Infinity;
  /** 429s whose cut the store has not yet decided: nothing is let go meanwhile (it would go at the old
   *  pace). */
  private deciding = 0;
  private readonly sends: number[] = [];
  private readonly counts = { sent: 0, limited: 0, queuedMs: 0, queuedSince: 0, firstAt: 0, lastAt: 0 };

  constructor(
    declared: { requestsPerMinute?: number; tokensPerMinute?: number } = {},
    private readonly store: PaceStore = new MemoryPace(),
    private readonly now: () => number = Date.now,
  ) {
    this.declared = {
      requestGapMs: declared.requestsPerMinute ? 60_000 / declared.requestsPerMinute : 0,
      tokenGapMs: declared.tokensPerMinute ? 60_000 / declared.tokensPerMinute : 0,
    };
  }

  /** Waits for the route's turn to send a request of `cost` estimated tokens; "late" past `deadline`. */
  turn(cost: number, deadline: number, signal?: AbortSignal): Promise<Turn> {
    if (signal?.aborted) return Promise.resolve("aborted");
    const now = this.now();
    const state = this.store.peek(now);
    const unpaced = state.rate === 0 && !this.declared.requestGapMs && !this.declared.tokenGapMs;
    const free = this.queue.length === 0 && this.inFlight < this.window && this.deciding === 0;
    if (unpaced && free && now >= state.pausedUntil)
      return Promise.resolve(this.release(state.epoch, cost, now)); // the common case: no timer, no lock
    return new Promise((resolve) => this.enqueue(cost, deadline, resolve, signal));
  }

  private enqueue(cost: number, deadline: number, resolve: (turn: Turn) => void, signal?: AbortSignal) {
    if (this.queue.length === 0) this.counts.queuedSince = this.now();
    const leave = (turn: Turn) => {
      const i = this.queue.indexOf(waiter);
      if (i >= 0) this.queue.splice(i, 1);
      this.noteQueue();
      waiter.resolve(turn);
    };
    const onAbort = () => leave("aborted");
    // A deadline past a timer's range (about 24.8 days) is never met while waiting: no timer, which Node
    // would otherwise fire at once.
    const left = Math.max(0, deadline - this.now());
    const late = left <= MAX_TIMER_MS ? setTimeout(() => leave("late"), left) : undefined;
    signal?.addEventListener("abort", onAbort, { once: true });
    const waiter: Waiter = {
      cost,
      queuedAt: this.now(),
      resolve: (turn) => {
        clearTimeout(late);
        signal?.removeEventListener("abort", onAbort);
        resolve(turn);
      },
    };
    this.queue.push(waiter);
    this.pump();
  }

  /** A try got an answer other than a 429: the pace grows, the window too. */
  answered(ticket: Ticket): void {
    this.ended();
    const most = 2 * this.sendRate();
    const state = this.store.peek(this.now());
    // Before any 429 nothing is learned (the ledger is not written); after one, only an answer to a
    // request let go since the last cut opens the window: one sent before says nothing of the pace now.
    if (state.epoch === 0) return this.pump();
    void this.store
      .update((state) => answered(state, most, ticket.epoch))
      .then((counted) => {
        if (counted) this.open();
        this.pump();
      });
  }

  /** The window after an answer: one more each below the threshold (slow start), a little beyond. */
  private open(): void {
    this.window = Math.min(this.window + (this.window < this.threshold ? 1 : 1 / this.window), 1e6);
  }

  /** A try ended without an answer (a connection error, a timeout): says nothing of the limit. */
  failed(_ticket: Ticket): void {
    this.ended();
    this.pump();
  }

  /** A 429: the server's wait (the whole route's) and the rates its headers give, per millisecond. */
  limited(
    ticket: Ticket,
    advice: { waitMs: number | null; requestsPerMs: number | null; tokensPerMs: number | null },
  ): void {
    const inFlight = this.inFlight;
    this.ended();
    this.counts.limited++;
    const measuredRate = this.sendRate();
    this.deciding++;
    void this.store
      .update((state) =>
        limited(state, { ...advice, epoch: ticket.epoch, cost: ticket.cost, now: this.now(), measuredRate }),
      )
      .then((cut) => {
        this.deciding--;
        this.shrink(cut, inFlight);
        this.restart();
      });
  }

  /** The window after a cut, `inFlight` the requests in flight when its 429 came. */
  private shrink(cut: Cut, inFlight: number): void {
    if (cut === "none") return;
    const kept = Math.max(1, Math.floor(Math.min(this.window, inFlight) * WINDOW_CUT));
    if (cut === "near") {
      this.window = this.threshold = kept;
      return;
    }
    // Closed to one; the window it reopens to is the one kept before a run of such cuts, not the last.
    if (this.window > 1) this.threshold = kept;
    this.window = 1;
  }

  report(): PaceReport {
    const { sent, limited, queuedMs, firstAt, lastAt } = this.counts;
    const rate = this.store.peek(this.now()).rate;
    return { sent, limited, queuedMs, spanMs: lastAt - firstAt, perMinute: rate * 60_000 };
  }

  private ended(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.counts.lastAt = this.now();
  }

  private release(epoch: number, cost: number, now: number): Ticket {
    this.inFlight++;
    this.counts.sent++;
    if (this.counts.sent === 1) this.counts.firstAt = now;
    this.sends.push(now);
    if (this.sends.length > SAMPLE) this.sends.shift();
    return { epoch, cost };
  }

  /** Requests per millisecond over the last releases (Infinity before two). */
  private sendRate(): number {
    if (this.sends.length < 2) return Infinity;
    const span = this.sends[this.sends.length - 1]! - this.sends[0]!;
    return (this.sends.length - 1) / Math.max(span, 1);
  }

  private noteQueue(): void {
    if (this.queue.length === 0) this.counts.queuedMs += this.now() - this.counts.queuedSince;
  }

  private restart(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pump();
  }

  /** Lets the waiters go in order, one at a time through the store (it may be another process's too). */
  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.timer || this.deciding > 0 || this.queue.length === 0 || this.inFlight >= this.window) return;
    this.pumping = true;
    void this.next().finally(() => {
      this.pumping = false;
      if (this.again) {
        this.again = false;
        this.pump();
      }
    });
  }

  private async next(): Promise<void> {
    while (this.queue.length > 0 && this.inFlight < this.window && this.deciding === 0) {
      const cost = this.queue[0]!.cost;
      const taken = await this.store.update((state) => {
        const now = this.now();
        return { wait: reserve(state, now, cost, this.declared), epoch: state.epoch, now };
      });
      // The head may have left meanwhile (late, aborted): the slot goes to the next in line, if any.
      const waiter = this.queue[0];
      if (taken.wait > 0) {
        this.timer = setTimeout(
          () => {
            this.timer = null;
            this.pump();
          },
          Math.min(taken.wait, MAX_TIMER_MS),
        );
        return;
      }
      if (!waiter) return;
      this.queue.shift();
      this.noteQueue();
      waiter.resolve(this.release(taken.epoch, waiter.cost, taken.now));
    }
  }
}

const pacers = new Map<string, Pacer>();

/** The route's pacer in this process (one per route name and URL, as its connection pool); `ledgerDir`:
 *  the folder of the ledgers shared with the machine's other builds (none: this process's alone). */
export function pacerFor(route: Route, ledgerDir?: string): Pacer {
  const id = `${route.name}\n${route.base_url}`;
  let pacer = pacers.get(id);
  if (!pacer) {
    const store = ledgerDir ? new LedgerPace(ledgerDir, ledgerName(route.name, route.base_url)) : undefined;
    pacer = new Pacer(
      {
        requestsPerMinute: route.requests_per_minute ?? undefined,
        tokensPerMinute: route.tokens_per_minute ?? undefined,
      },
      store,
    );
    pacers.set(id, pacer);
  }
  return pacer;
}

/**
 * A request's tokens as a rate limit counts them, estimated before it is sent: its body's bytes over four
 * (OpenAI's rule of thumb for English text) plus the most it may generate (`outputBound`, as its protocol
 * reads the body's max tokens field; null: none).
 */
export function estimatedTokens(payload: Buffer, outputBound: number | null): number {
  return Math.ceil(payload.length / 4) + (outputBound ?? 0);
}

/** What the terminal says of a stage's pace, from the pacer's reports before and after it sent (null when
 *  the pace did not hold its requests back for at least half of the `ms` it spent sending): the rate the
 *  route kept, in requests a minute, and the 429s it met. */
export function paceNote(route: Route, before: PaceReport, after: PaceReport, ms: number): string | null {
  const sent = after.sent - before.sent;
  const refused = after.limited - before.limited;
  const queued = after.queuedMs - before.queuedMs;
  if (sent === 0 || queued < ms / 2) return null;
  const kept = Math.round(((sent - refused) * 60_000) / ms);
  const share = `${refused} of ${sent} requests (${((100 * refused) / sent).toFixed(1)} %) were 429s`;
  const waited = Math.round((100 * queued) / ms);
  return (
    `route ${route.name}: the rate limit set the pace ` +
    `(requests waited their turn ${waited} % of the time); ` +
    `it settled at ${kept} answered requests/minute; ${share}`
  );
}
