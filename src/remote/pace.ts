// How the shared remote is paced: a throttled call (S3's 503 SlowDown, or 429) is tried again after an
// exponential, jittered wait, as S3 asks of its clients, instead of switching the remote off; and the
// latency of every call is kept, so that a build slowed down by its remote says so once at its end.
const THROTTLE_CODES = new Set([
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "TooManyRequestsException",
]);
/** Tries of one throttled call (each also retried once by the SDK itself). */
export const THROTTLED_TRIES = 6;
const BASE_WAIT_MS = 200;
const MAX_WAIT_MS = 5000;
/** A median call slower than this makes the remote the build's bottleneck (a local read takes < 1 ms). */
const SLOW_CALL_MS = 1000;
const KEPT_LATENCIES = 10_000;
/** Throttled calls skipped in a row after which the remote is switched off for the run. */
const SKIPS_IN_A_ROW = 10;

export function isThrottled(e: unknown): boolean {
  const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const name = (e as { name?: string }).name ?? "";
  return status === 503 || status === 429 || THROTTLE_CODES.has(name);
}

/** The wait before try `attempt + 1` of a throttled call: full jitter over an exponential ceiling. */
export function throttleWaitMs(attempt: number, random = Math.random): number {
  return Math.floor(random() * Math.min(MAX_WAIT_MS, BASE_WAIT_MS * 2 ** attempt));
}

export class RemotePace {
  private readonly latencies: number[] = [];
  throttled = 0; // calls answered "slow down", then tried again
  gaveUp = 0; // calls still throttled after every try: skipped (a miss, or an upload left for later)

  private skippedInARow = 0;

  answered(ms: number): void {
    this.skippedInARow = 0;
    if (this.latencies.length < KEPT_LATENCIES) this.latencies.push(ms);
  }

  /** A call still throttled after every try: true while it may be skipped, false once too many in a row. */
  skip(): boolean {
    this.gaveUp++;
    return ++this.skippedInARow < SKIPS_IN_A_ROW;
  }

  /** One sentence on the remote's pace for the end of a build, or null when it kept up. */
  summary(url: string): string | null {
    const sorted = [...this.latencies].sort((left, right) => left - right);
    const median = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0;
    const slow = sorted.length >= 4 && median >= SLOW_CALL_MS;
    if (!slow && this.gaveUp === 0) return null;
    const parts = [`remote cache ${url} was the bottleneck of this build:`];
    if (slow)
      parts.push(`its median call took ${(median / 1000).toFixed(1)} s over ${sorted.length} calls;`);
    if (this.throttled) parts.push(`${this.throttled} calls were throttled (slow down) and tried again;`);
    if (this.gaveUp)
      parts.push(`${this.gaveUp} still throttled were skipped (found or uploaded next time);`);
    parts.push("check the store's region and load, or build without MEDBENCH_REMOTE");
    return parts.join(" ");
  }
}
