// The route's pacer (src/model/pacer.ts) on vitest's fake clock: when each waiting request is let go, with no
// wall-clock time involved.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Pacer } from "../src/model/pacer.js";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Queues `n` requests of `cost` tokens and returns the times (ms) at which each was let go. */
function released(pacer: Pacer, n: number, cost = 1): number[] {
  const times: number[] = [];
  for (let i = 0; i < n; i++)
    void pacer.turn(cost, 1e9).then((turn) => {
      if (turn === "go") times.push(Date.now());
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

  it("after a 429 waits the server's time, then paces at the rate it gave, with a margin", async () => {
    const pacer = new Pacer();
    expect(pacer.free).toBe(true);
    pacer.limited(500, { requestsPerMs: 0.01, tokensPerMs: null }); // 10 a second
    expect(pacer.free).toBe(false);
    const times = released(pacer, 3);
    await vi.advanceTimersByTimeAsync(5000);
    const gap = 1 / (0.01 * 0.98);
    // Each spaced from the moment the one before went (a timer fires on a whole millisecond).
    const second = Math.ceil(500 + gap);
    expect(times).toEqual([500, second, Math.ceil(second + gap)]);
  });

  it("never paces below a declared rate when the server's is faster", async () => {
    const pacer = new Pacer({ requestsPerMinute: 60 });
    pacer.limited(0, { requestsPerMs: 1, tokensPerMs: null });
    const times = released(pacer, 2);
    await vi.advanceTimersByTimeAsync(5000);
    expect(times).toEqual([0, 1000]);
  });

  it("without a rate, lets one request go after the pause and the rest once it is answered", async () => {
    const pacer = new Pacer();
    pacer.limited(200, { requestsPerMs: null, tokensPerMs: null });
    const times = released(pacer, 3);
    await vi.advanceTimersByTimeAsync(1000);
    expect(times).toEqual([200]);
    pacer.settled();
    await vi.advanceTimersByTimeAsync(0);
    expect(times).toEqual([200, 1000, 1000]);
  });

  it("gives up on a request whose deadline passes while the route is paused", async () => {
    const pacer = new Pacer();
    pacer.limited(10_000, { requestsPerMs: null, tokensPerMs: null });
    const turn = pacer.turn(1, 3000);
    await vi.advanceTimersByTimeAsync(3000);
    expect(await turn).toBe("late");
  });
});

describe("the pacer's timers", () => {
  it("does not give up at once on a deadline beyond a timer's range", async () => {
    vi.useRealTimers(); // Node's own timers: a delay past 2^31 - 1 ms fires at once there
    const pacer = new Pacer();
    pacer.limited(20, { requestsPerMs: null, tokensPerMs: null });
    const controller = new AbortController();
    const turn = pacer.turn(1, Date.now() + 2 ** 32, controller.signal);
    // Waits for the pause (20 ms), not for a clock: the turn settles either way, "go" or a wrong "late".
    expect(await turn).toBe("go");
  });
});
