// The route's pacer (src/model/pacer.ts, src/model/pace.ts) on vitest's fake clock: when each waiting
// request is let go, how a 429 cuts the pace and answers raise it, and the pace against simulated limiters
// (a token bucket answering after a fixed latency), all with no wall-clock time involved.
import { estimateOf } from "../../src/model/budget.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pacer, estimatedTokens, type Ticket } from "../../src/model/pacer.js";
import { loadRoutes } from "../../src/model/registry.js";
import { openai } from "../../src/model/openai.js";
import { gemini } from "../../src/model/gemini.js";
import { anthropic } from "../../src/model/anthropic.js";
import type { Protocol } from "../../src/model/protocol.js";
import { LedgerPace } from "../../src/model/pace-ledger.js";
import { answered, freshPace, limited, reserve, type PaceState } from "../../src/model/pace.js";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const NO_HINT = { waitMs: null, requestsPerMs: null, tokensPerMs: null };

/** Queues `n` requests of `cost` tokens and returns the times (ms) at which each was let go; `answer`: each
 *  answered as soon as it goes. */
function released(pacer: Pacer, n: number, cost = 1, tickets: Ticket[] = [], answer = false): number[] {
  const times: number[] = [];
  for (let i = 0; i < n; i++)
    void pacer.turn(cost, 1e9).then((turn) => {
      if (typeof turn === "object") {
        times.push(Date.now());
        tickets.push(turn);
        if (answer) pacer.answered(turn);
      }
    });
  return times;
}

describe("the pacer", () => {
  it("spaces requests at a declared requests_per_minute: never two within 60/N s", async () => {
    const pacer = new Pacer({ requestsPerMinute: 60 });
    const times = released(pacer, 5);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(times).toEqual([0, 1000, 2000, 3000, 4000]);
  });

  it("spaces requests by their estimated tokens at a declared tokens_per_minute", async () => {
    const pacer = new Pacer({ tokensPerMinute: 600 }); // 10 tokens a second
    const times = released(pacer, 3, 50);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(times).toEqual([0, 5000, 10_000]);
  });

  it("before any 429 lets every request go at once", async () => {
    const times = released(new Pacer(), 4);
    await vi.advanceTimersByTimeAsync(0);
    expect(times).toEqual([0, 0, 0, 0]);
  });

  it("after a 429 waits the server's time, then paces the queue at the rate its headers give", async () => {
    const pacer = new Pacer();
    const tickets: Ticket[] = [];
    released(pacer, 1, 1, tickets);
    await vi.advanceTimersByTimeAsync(0);
    pacer.limited(tickets[0]!, { waitMs: 500, requestsPerMs: 0.01, tokensPerMs: null }); // 10 a second
    const times = released(pacer, 3, 1, [], true);
    await vi.advanceTimersByTimeAsync(5000);
    const gap = 1 / (0.01 * 0.98);
    // Each spaced from the one before, never released together when the pause ends.
    expect(times[0]).toBe(500);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(gap - 1);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(gap - 1);
  });

  it("a 429 without headers cuts the rate it was sending at; no backoff pauses the route", async () => {
    const pacer = new Pacer();
    const tickets: Ticket[] = [];
    // 33 requests spread over 320 ms: the route was sending 100 a second.
    for (let i = 0; i < 33; i++) {
      released(pacer, 1, 1, tickets);
      await vi.advanceTimersByTimeAsync(i < 32 ? 10 : 0);
    }
    for (const ticket of tickets.slice(0, 32)) pacer.answered(ticket);
    pacer.limited(tickets[32]!, NO_HINT);
    await vi.advanceTimersByTimeAsync(0);
    expect(pacer.report().perMinute).toBeCloseTo(80 * 60, -1);
    const times = released(pacer, 3, 1, [], true);
    await vi.advanceTimersByTimeAsync(1000);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // 100 a second cut to 80: 12.5 ms apart, the first one spacing after the 429.
    expect(times[0]! - 320).toBeLessThanOrEqual(13);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(12);
  });

  it("cuts once per epoch: 429s of requests sent before the cut do not cut again", async () => {
    const pacer = new Pacer();
    const tickets: Ticket[] = [];
    released(pacer, 8, 1, tickets);
    await vi.advanceTimersByTimeAsync(0);
    pacer.limited(tickets[0]!, { waitMs: null, requestsPerMs: 0.1, tokensPerMs: null });
    await vi.advanceTimersByTimeAsync(0);
    const once = pacer.report().perMinute;
    for (const ticket of tickets.slice(1)) pacer.limited(ticket, NO_HINT);
    await vi.advanceTimersByTimeAsync(0);
    expect(once).toBeCloseTo(0.1 * 0.98 * 60_000, 3);
    expect(pacer.report().perMinute).toBe(once);
  });

  it("a header's rate that keeps meeting 429s is cut below it; answers raise the rate again", async () => {
    const pacer = new Pacer();
    const hint = { waitMs: null, requestsPerMs: 0.1, tokensPerMs: null };
    const tickets: Ticket[] = [];
    released(pacer, 1, 1, tickets);
    await vi.advanceTimersByTimeAsync(0);
    pacer.limited(tickets[0]!, hint);
    released(pacer, 1, 1, tickets);
    await vi.advanceTimersByTimeAsync(100);
    pacer.limited(tickets[1]!, hint); // at once: the header's rate is not the server's
    await vi.advanceTimersByTimeAsync(0);
    const cut = pacer.report().perMinute;
    expect(cut).toBeLessThan(0.1 * 0.98 * 60_000 * 0.9);
    released(pacer, 40, 1, tickets, true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(pacer.report().perMinute).toBeGreaterThan(cut);
  });

  it("after a first 429 lets one request go at a time until one let go since is answered", async () => {
    const pacer = new Pacer();
    const before: Ticket[] = [];
    released(pacer, 16, 1, before);
    await vi.advanceTimersByTimeAsync(0);
    pacer.limited(before[0]!, { waitMs: null, requestsPerMs: 1, tokensPerMs: null }); // far too fast
    const after: Ticket[] = [];
    released(pacer, 4, 1, after);
    // Answers to requests let go before the cut say nothing of the pace now: the window stays closed.
    for (const ticket of before.slice(1)) pacer.answered(ticket);
    await vi.advanceTimersByTimeAsync(100);
    expect(after.length).toBe(1);
    pacer.answered(after[0]!); // opens it by one (slow start): two go
    await vi.advanceTimersByTimeAsync(100);
    expect(after.length).toBe(3);
  });

  it("lets nothing go while a 429's cut is being decided (through the ledger's lock)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-pace-"));
    try {
      const pacer = new Pacer({}, new LedgerPace(dir, "route.json"));
      const first = await pacer.turn(1, 1e9);
      if (typeof first !== "object") throw new Error(first);
      pacer.limited(first, NO_HINT);
      const next = await pacer.turn(1, 1e9); // asked before the cut is written: let go after it
      expect(typeof next === "object" && next.epoch).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives up on a request whose deadline passes while the route is paused", async () => {
    const pacer = new Pacer();
    const tickets: Ticket[] = [];
    released(pacer, 1, 1, tickets);
    await vi.advanceTimersByTimeAsync(0);
    pacer.limited(tickets[0]!, { ...NO_HINT, waitMs: 10_000 });
    const turn = pacer.turn(1, 3000);
    await vi.advanceTimersByTimeAsync(3000);
    expect(await turn).toBe("late");
  });
});

/** A token bucket of `burst` refilled at `perMinute()` answering `latencyMs` after a request is sent. */
function simulate(options: { perMinute: (t: number) => number; burst: number; items: number }) {
  const { burst, items } = options;
  let tokens = burst;
  let at = 0;
  const take = (now: number) => {
    tokens = Math.min(burst, tokens + ((now - at) * options.perMinute(now)) / 60_000);
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
  return { take, items };
}

interface Limiter {
  perMinute: (t: number) => number;
  burst: number;
  items: number;
  /** The milliseconds from a request's release to its answer (20), and what a 429's headers say. */
  latencyMs?: number;
  advice?: { waitMs: number | null; requestsPerMs: number | null; tokensPerMs: number | null };
}

/** Sends `items` requests, 16 at a time, through a pacer against the simulated bucket; the 429s' share, the
 *  429s in the first two seconds of requests let go after the first cut (those before it went out before
 *  any 429 was known), and the share of the bucket's allowance used from the first request to the last
 *  answer. */
async function run(options: Limiter) {
  const server = simulate(options);
  const pacer = new Pacer();
  let next = 0;
  let refused = 0;
  let early = 0;
  let answered = 0;
  const worker = async () => {
    while (next < server.items) {
      next++;
      for (;;) {
        const turn = await pacer.turn(1, 1e12);
        if (typeof turn !== "object") throw new Error(turn);
        await new Promise((resolve) => setTimeout(resolve, options.latencyMs ?? 20));
        if (server.take(Date.now())) {
          pacer.answered(turn);
          answered++;
          break;
        }
        refused++;
        if (Date.now() < 2000 && turn.epoch > 0) early++;
        pacer.limited(turn, options.advice ?? NO_HINT);
      }
    }
  };
  const done = Promise.all(Array.from({ length: 16 }, worker));
  while (answered < server.items) await vi.advanceTimersByTimeAsync(100);
  await done;
  let allowed = options.burst;
  for (let t = 0; t < Date.now(); t += 100) allowed += (options.perMinute(t) * 100) / 60_000;
  return { answered, early, wasted: refused / (refused + answered), share: answered / allowed };
}

describe("the pace against a limiter that says nothing but 429", () => {
  it("600 a minute in a bucket of 10: few 429s, most of the allowed rate", async () => {
    const r = await run({ perMinute: () => 600, burst: 10, items: 1500 });
    expect(r.wasted).toBeLessThan(0.1);
    expect(r.share).toBeGreaterThan(0.85);
  });

  it("60 a minute in a bucket of 60: the route is never starved", async () => {
    const r = await run({ perMinute: () => 60, burst: 60, items: 400 });
    expect(r.wasted).toBeLessThan(0.1);
    expect(r.share).toBeGreaterThan(0.8);
  });

  it("600 a minute in a bucket of 10, answered in 5 ms: the limit is found in a few 429s", async () => {
    const r = await run({ perMinute: () => 600, burst: 10, items: 600, latencyMs: 5 });
    expect(r.early).toBeLessThan(8);
  });

  it("a limit that drops from 600 to 120 a minute halfway", async () => {
    const r = await run({ perMinute: (t) => (t < 60_000 ? 600 : 120), burst: 10, items: 900 });
    expect(r.wasted).toBeLessThan(0.1);
    expect(r.share).toBeGreaterThan(0.85);
  });
});

describe("the pace against a limiter whose headers claim sixty times its rate", () => {
  // A gateway that counts 10 a second but reports the minute's 600 as its limit, reset in a second.
  const advice = { waitMs: 100, requestsPerMs: 600 / 1000, tokensPerMs: null };
  it("600 a minute in a bucket of 10, answered in 5 ms: the limit is found in a few 429s", async () => {
    const r = await run({ perMinute: () => 600, burst: 10, items: 600, latencyMs: 5, advice });
    expect(r.early).toBeLessThan(8);
    expect(r.wasted).toBeLessThan(0.1);
    expect(r.share).toBeGreaterThan(0.85);
  });
});

describe("a cut", () => {
  const refusal = (state: PaceState) => ({
    ...NO_HINT,
    epoch: state.epoch,
    cost: 1,
    now: 0,
    measuredRate: 1,
  });
  it("is gentle when the rate held for ten answers since the last cut, deep when it did not", () => {
    const state = freshPace();
    expect(limited(state, refusal(state))).toBe("lost"); // the first: no rate known
    const rate = state.rate;
    for (let i = 0; i < 9; i++) answered(state, Infinity, state.epoch);
    answered(state, Infinity, state.epoch - 1); // let go before the cut: not counted
    expect(limited(state, refusal(state))).toBe("lost");
    expect(state.rate).toBeLessThan(rate * 0.6);
    const deep = state.rate;
    for (let i = 0; i < 10; i++) answered(state, Infinity, state.epoch);
    const held = state.rate;
    expect(limited(state, refusal(state))).toBe("near");
    expect(state.rate).toBeCloseTo(held * 0.8, 10);
    expect(held).toBeGreaterThan(deep);
  });
});

describe("a probe past the rate that met the last 429", () => {
  it("comes after 50 answers with no 429, not sooner (each costs about one 429), then every 25", () => {
    const state = freshPace();
    limited(state, { ...NO_HINT, epoch: 0, cost: 1, now: 0, measuredRate: 0.01 });
    const met = state.lastMax;
    for (let i = 0; i < 49; i++) answered(state, Infinity, state.epoch);
    expect(state.lastMax).toBe(met);
    answered(state, Infinity, state.epoch);
    const probed = state.lastMax;
    expect(probed).toBeGreaterThan(met);
    // Then every 25 while no 429 comes: a limit far above the pace is found in a few probes.
    for (let i = 0; i < 24; i++) answered(state, Infinity, state.epoch);
    expect(state.lastMax).toBe(probed);
    answered(state, Infinity, state.epoch);
    expect(state.lastMax).toBeGreaterThan(probed);
  });
});

describe("a turn's slot", () => {
  it("is kept when taken late (a late timer does not slow the route), not after an idle moment", () => {
    const state = freshPace();
    state.rate = 0.01; // 10 a second
    const declared = { requestGapMs: 0, tokenGapMs: 0 };
    expect(reserve(state, 0, 1, declared)).toBe(0);
    expect(state.nextAt).toBe(100);
    expect(reserve(state, 130, 1, declared)).toBe(0); // its timer fired 30 ms late
    expect(state.nextAt).toBe(200);
    expect(reserve(state, 195, 1, declared)).toBe(5);
    expect(reserve(state, 1000, 1, declared)).toBe(0); // after an idle moment: a whole spacing
    expect(state.nextAt).toBe(1100);
  });
});

describe("the pace ledger", () => {
  it("is shared by two pacers of a route: one's cut paces the other, slots spaced across both", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-pace-"));
    try {
      const [a, b] = [0, 1].map(() => new Pacer({}, new LedgerPace(dir, "route.json")));
      const tickets: Ticket[] = [];
      released(a!, 1, 1, tickets);
      await vi.advanceTimersByTimeAsync(0);
      a!.limited(tickets[0]!, { waitMs: null, requestsPerMs: 0.01, tokensPerMs: null }); // 10 a second
      await vi.advanceTimersByTimeAsync(300); // b reads the ledger again
      const times = [released(a!, 2, 1, [], true), released(b!, 2, 1, [], true)];
      await vi.advanceTimersByTimeAsync(2000);
      const sorted = times.flat().sort((x, y) => x - y);
      expect(sorted.length).toBe(4);
      for (let i = 1; i < sorted.length; i++)
        expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(100);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the pacer's timers", () => {
  it("does not give up at once on a deadline beyond a timer's range", async () => {
    vi.useRealTimers(); // Node's own timers: a delay past 2^31 - 1 ms fires at once there
    const pacer = new Pacer();
    const first = await pacer.turn(1, Date.now() + 1000);
    if (typeof first !== "object") throw new Error(first);
    pacer.limited(first, { ...NO_HINT, waitMs: 20 });
    const controller = new AbortController();
    const turn = pacer.turn(1, Date.now() + 2 ** 32, controller.signal);
    // Waits for the pause (20 ms), not for a clock: the turn settles either way, "go" or a wrong "late".
    expect(typeof (await turn)).toBe("object");
  });
});

describe("a request's estimated tokens", () => {
  const routes = loadRoutes([]);
  const request = { messages: [{ role: "user", content: "Hand me the gauze." }] };
  it.each([
    ["openai", openai, "gpt-4.1"], // max_completion_tokens, the shipped route's token_field
    ["local", openai, "qwen3-8b"], // max_tokens
    ["gemini", gemini, "gemini-2.0-flash"], // generationConfig.maxOutputTokens
    ["anthropic", anthropic, "claude-sonnet-4-5"], // max_tokens
  ] as const)(
    "route %s: its bytes / 4 plus the most it may generate, in its protocol's field",
    (name, speaks, model) => {
      const protocol: Protocol = speaks;
      const route = routes.get(name)!;
      const body = protocol.body(request, { max_tokens: 700, thinking: "off" }, route, model, "none");
      const { payload } = protocol.serialise(route, body);
      expect(estimatedTokens(payload, protocol.outputBound(body))).toBe(Math.ceil(payload.length / 4) + 700);
      // status's and --max-cost's estimate read the same field through the protocol.
      const estimate = estimateOf(
        [
          { payload, body },
          { payload, body },
        ],
        protocol.outputBound,
        null,
        false,
      );
      expect(estimate.output_tokens).toBe(1400);
    },
  );
});
