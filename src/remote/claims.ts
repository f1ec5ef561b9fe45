// Claims on model requests in the shared remote cache, so that machines building the same model at the
// same time (without --shard) send each request once. Before sending a request it did not find, a machine
// writes claims/<folder>/<request key> with a conditional write (If-None-Match: *, which AWS S3, MinIO and
// scripts/s3-server.mjs refuse with 412 when the name exists). The one whose write succeeds sends; the
// others wait for its reply to appear (saying whom they wait for, and until when), and take the request
// over when the claim they read outlives its time (its machine died or stopped), when its machine is this
// host and its process is gone or a zombie, or when the reply it led to was refused as damaged. A takeover
// replaces the very claim read (If-Match: its ETag), so of the machines waiting one wins, and the clock
// restarts whenever the claim there changes; the time a claim holds is its holder's (it says it), as its
// holder renews it. A claim won after waiting on another is followed by one more look for the reply, which
// may have come meanwhile. A claim is answered once its reply is in the store; a reply whose upload failed
// releases its claim at once, so that another machine sends it; unanswered claims are released at the end
// of the run. A release deletes only the very claim this process wrote (If-Match), never one taken over.
// A store that cannot claim (it accepts a second conditional write) or that throttles claim writes turns
// claiming off for the run, with one warning: requests then go unclaimed.
import { randomBytes } from "../util/builtins.js";
import { hostname } from "node:os";
import { processState } from "../util/fsutil.js";
import type { RemoteStore } from "./store.js";
import { ClaimNotes, type ClaimBody, type TakeoverWhy } from "./claim-notes.js";

const POLL_MS = 500;
/** Claim writes answered "slow down" in a row that turn claiming off for the run: each costs a request
 *  only its going unclaimed, and a store throttling one call in three must not reach it (about 1 in 10^5
 *  runs). */
export const THROTTLED_IN_A_ROW = 16;
/** Replies of this machine the store did not take in a row (each after its own tries) that turn it off. */
const UNSTORED_IN_A_ROW = 3;

export type ClaimOutcome = { kind: "send" } | { kind: "found"; data: Buffer } | { kind: "unclaimed" };
const SEND: ClaimOutcome = { kind: "send" };
const UNCLAIMED: ClaimOutcome = { kind: "unclaimed" };

/** The longest TTL a claim may say it holds for (MEDBENCH_CLAIM_TTL_S's own limit, a day). */
const MOST_TTL_MS = 86_400_000;

function parseClaim(data: Buffer): ClaimBody | null {
  try {
    const body = JSON.parse(data.toString("utf8")) as ClaimBody;
    return body && typeof body === "object" ? body : null;
  } catch {
    return null;
  }
}

/** How to find a request's reply, and whether the one found was refused as damaged. */
export interface ReplyLookup {
  lookup: () => Promise<Buffer | null>;
  refused: () => boolean;
}

export class RequestClaims {
  private readonly token = randomBytes(8).toString("hex");
  /** Claims this process holds, by name: when it last wrote each (performance.now(), this process's clock;
   *  -Infinity: taken over meanwhile) and the ETag of that write. */
  private readonly held = new Map<string, { since: number; etag: string }>();
  private renewing: NodeJS.Timeout | null = null;
  private readonly releases = new Set<Promise<void>>();
  private support: Promise<boolean> | null = null;
  private off = false;
  private throttledInARow = 0;
  private unstoredInARow = 0;
  private readonly notes: ClaimNotes;

  constructor(
    private readonly store: RemoteStore,
    private readonly writer: string,
    private readonly warn: (message: string) => void,
    inform: (message: string) => void,
    private readonly ttlMs: number,
  ) {
    this.notes = new ClaimNotes(inform);
  }

  /** Once per process: does the store refuse a second conditional write of one name? */
  private supported(): Promise<boolean> {
    return (this.support ??= this.probe());
  }

  private async probe(): Promise<boolean> {
    const name = `claims/.probe-${this.token}`;
    let first = await this.write(name);
    while (first === "throttled") first = await this.write(name);
    if (first !== "created") return false;
    const second = await this.write(name);
    this.held.delete(name);
    await this.store.removeQuietly([name]);
    if (second === "exists") return true;
    if (second === "created")
      this.warn(
        `remote cache ${this.store.config.url} does not refuse a conditional write (If-None-Match: *): ` +
          "machines building the same model at once may send a request twice (split the work with --shard)",
      );
    return false;
  }

  /**
   * Claims a request before it is sent. Returns "send" (this process holds the claim), "found" (the reply
   * another machine received while this one waited), or "unclaimed" (no claims here: send it, as without).
   */
  async claim(name: string, reply: ReplyLookup): Promise<ClaimOutcome> {
    if (!(await this.supported())) return UNCLAIMED;
    for (let waited = false; ; waited = true) {
      const written = await this.write(name);
      if (written === "created") return waited ? this.lookAgain(name, reply) : SEND;
      if (written !== "exists") return UNCLAIMED;
      const outcome = await this.wait(name, reply);
      if (outcome !== null) return outcome;
    }
  }

  /** A claim won after waiting on another's: its reply may have reached the store since the last look
   *  (stored before that claim was released, or while this machine took it over). Found, the claim stays
   *  as an answered one does. */
  private async lookAgain(name: string, reply: ReplyLookup): Promise<ClaimOutcome> {
    const data = await reply.lookup();
    if (data === null) return SEND;
    this.held.delete(name);
    return { kind: "found", data };
  }

  /** Waits on another machine's claim: its reply, a takeover, or null when the claim went away. */
  private async wait(name: string, reply: ReplyLookup): Promise<ClaimOutcome | null> {
    let seen = null as { etag: string; until: number } | null;
    for (;;) {
      const data = await reply.lookup();
      if (data !== null) return { kind: "found", data };
      const current = await this.store.getPlain(name);
      if (current === null) return null; // released: claim it (or the remote is off: then unclaimed)
      const holder = parseClaim(current.data);
      if (holder?.token === this.token) return this.hold(name, current.etag); // its own write, retried
      // The clock runs from when this machine first read this very claim, for as long as its holder says
      // it holds (it renews it at a third of that): a new holder starts it again.
      const ttlMs = this.heldFor(holder);
      if (seen?.etag !== current.etag) seen = { etag: current.etag, until: performance.now() + ttlMs };
      this.notes.waiting(holder, seen.until, ttlMs);
      const why = this.takeover(holder, seen.until, reply);
      if (why !== null) {
        const replaced = await this.write(name, current.etag);
        if (replaced === "created") {
          this.notes.tookOver(holder, why);
          return this.lookAgain(name, reply);
        }
        if (replaced !== "exists") return UNCLAIMED;
        seen = null; // another machine replaced it first, or it was released: read it again
        continue;
      }
      await new Promise((wake) => setTimeout(wake, POLL_MS + Math.random() * POLL_MS));
    }
  }

  /** How long a claim holds: as long as its holder says (machines may be set apart), else this one's. */
  private heldFor(holder: ClaimBody | null): number {
    const said = holder?.ttlMs;
    return typeof said === "number" && said > 0 && said <= MOST_TTL_MS ? said : this.ttlMs;
  }

  /** Why a claim of another process may be taken over now, or null. */
  private takeover(holder: ClaimBody | null, until: number, reply: ReplyLookup): TakeoverWhy | null {
    if (performance.now() >= until) return "deadline";
    if (reply.refused()) return "damaged";
    // A process of this host is judged by its state; another host's only by the deadline.
    if (!holder || holder.host !== hostname() || typeof holder.pid !== "number") return null;
    const state = processState(holder.pid);
    return state === "alive" ? null : state;
  }

  private hold(name: string, etag: string): ClaimOutcome {
    this.held.set(name, { since: performance.now(), etag });
    // A claim held is written anew every third of its TTL while its request is out, so that a slow holder
    // is not taken for a dead one; a stopped or dead one writes nothing, and its claims expire.
    this.renewing ??= setInterval(() => void this.renew(), this.ttlMs / 3).unref();
    return SEND;
  }

  private renewRound: Promise<void> | null = null;

  private async renew(): Promise<void> {
    if (this.renewRound) return;
    this.renewRound = (async () => {
      for (const [name, { since, etag }] of [...this.held]) {
        const current = this.held.get(name);
        if (current?.etag !== etag || performance.now() - since < this.ttlMs / 3 || since === -Infinity)
          continue; // answered meanwhile, written anew, fresh, or lost
        const written = await this.write(name, etag, true);
        // Replaced by another machine (this process did not run for its TTL): it is that one's now.
        const mine = this.held.get(name);
        if (written === "exists" && mine?.etag === etag) mine.since = -Infinity;
      }
    })().finally(() => (this.renewRound = null));
  }

  /**
   * Before a request this process claimed is sent again (a try failed, or it failed for good): when the
   * claim has outlived its time (this process was stopped, or its server slow), another machine may have
   * taken it over. Then the reply it stored is taken, or that machine is waited for; a claim still this
   * process's is written again, so that the waiting machines' clocks start again.
   */
  async recheck(name: string, reply: ReplyLookup): Promise<ClaimOutcome> {
    const since = this.held.get(name)?.since;
    if (since === undefined || performance.now() - since < this.ttlMs || this.off) return SEND;
    const data = await reply.lookup();
    if (data !== null) {
      this.held.delete(name);
      this.notes.lost(this.ttlMs);
      return { kind: "found", data };
    }
    const current = await this.store.getPlain(name);
    if (current !== null && parseClaim(current.data)?.token === this.token) {
      await this.write(name, current.etag); // renewed: held from now
      return SEND;
    }
    this.held.delete(name);
    this.notes.lost(this.ttlMs);
    return this.claim(name, reply);
  }

  /** A conditional write of this process's claim (`etag`: replacing the claim read; `renewal`: a claim
   *  held, which stays released if it was answered or released while the write was under way). */
  private async write(
    name: string,
    etag?: string,
    renewal = false,
  ): Promise<"created" | "exists" | "throttled" | "off"> {
    if (this.off) return "off";
    const body: ClaimBody = {
      writer: this.writer,
      token: this.token,
      host: hostname(),
      pid: process.pid,
      ttlMs: this.ttlMs,
      nonce: randomBytes(4).toString("hex"), // each write its own ETag, so a waiter sees a new claim
    };
    const { written, etag: writtenTag } = await this.store.putClaim(
      name,
      Buffer.from(JSON.stringify(body)),
      etag,
    );
    if (written === "throttled") {
      if (++this.throttledInARow >= THROTTLED_IN_A_ROW)
        this.turnOff(`throttled ${THROTTLED_IN_A_ROW} claim writes in a row`);
      return this.off ? "off" : "throttled";
    }
    this.throttledInARow = 0;
    if (written === "unsupported") {
      // No If-Match: the claim read is deleted and written anew (two machines at once may both win).
      await this.store.removeQuietly([name]);
      return this.write(name);
    }
    if (written === "created" && (!renewal || this.held.has(name))) this.hold(name, writtenTag ?? "");
    if (written === "gone") return "exists";
    return written === "down" ? "off" : written;
  }

  /** Claim writes throttled, or replies not stored, again and again: claims would only keep requests
   *  waiting, so none are made, and those held are released for other machines to send. */
  private turnOff(what: string): void {
    if (this.off) return;
    this.off = true;
    this.warn(
      `remote cache ${this.store.config.url} ${what}: claiming is off for the rest of this run, and ` +
        "requests now go unclaimed (machines building the same model at once may send a request more " +
        "than once; split the work with --shard)",
    );
    void this.releaseAll();
  }

  /** A claim this process holds was answered (its reply is in the store): it stays there. */
  answered(name: string): void {
    this.held.delete(name);
    this.unstoredInARow = 0;
  }

  /** A claim whose reply did not reach the store: released now, so that another machine sends it. */
  release(name: string): void {
    // A remote switched off has warned, and released every claim as it went.
    if (!this.store.available) return void this.held.delete(name);
    if (++this.unstoredInARow >= UNSTORED_IN_A_ROW)
      this.turnOff(
        `did not take ${UNSTORED_IN_A_ROW} replies of this machine in a row (throttled or refused)`,
      );
    const claim = this.held.get(name);
    if (!claim) return;
    this.held.delete(name);
    this.track(this.removeOwn([[name, claim.etag]]));
  }

  /** Releases every claim still held (the end of the run, or the remote switched off). */
  async releaseAll(): Promise<void> {
    await this.renewRound; // a renewal under way decides what is still held
    const claims = [...this.held].map(([name, { etag }]): [string, string] => [name, etag]);
    this.held.clear();
    if (this.renewing) clearInterval(this.renewing);
    this.renewing = null;
    if (claims.length) this.track(this.removeOwn(claims));
    while (this.releases.size) await Promise.all([...this.releases]);
  }

  private track(release: Promise<void>): void {
    this.releases.add(release);
    void release.finally(() => this.releases.delete(release));
  }

  /**
   * Deletes the claims that are still this process's, each only while it is the very claim read (If-Match):
   * one another machine took over meanwhile is left to it. A remote switched off reads nothing: the claim
   * this process last wrote (`[name, its ETag]`) is deleted, if it is still there.
   */
  private async removeOwn(claims: [string, string][]): Promise<void> {
    await this.renewRound; // a renewal under way would write the claim anew after it was read
    for (const [name, written] of claims) {
      if (!this.store.available) {
        await this.store.removeClaim(name, written, true);
        continue;
      }
      const current = await this.store.getPlain(name);
      if (current !== null && parseClaim(current.data)?.token === this.token)
        await this.store.removeClaim(name, current.etag);
    }
  }
}
