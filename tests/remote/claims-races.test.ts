// Races of claims (src/remote/claims.ts) between what a machine read from the store and what it does next,
// driven one step at a time: two machines (RemoteStores of their own, in this process) against the test S3
// server, whose `late` answers hold one read or write on its way back until the test says `go`. No timing:
// each race is made to happen, then its outcome is checked.
import { createHash } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ClaimOutcome, ReplyLookup } from "../../src/remote/claims.js";
import { remoteDeadlineMs, RemoteStore } from "../../src/remote/store.js";
import { claimName, remoteConfig, replyName } from "../../src/remote/opened.js";
import { cleanUp, remoteEnv, startS3, type S3 } from "../support/remote-rig.js";

afterEach(cleanUp);

beforeAll(() => {
  // The SDK's default chain reads the test server's credentials from this process's environment.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" });
});

const FOLDER = "fake_test-model";

/** A machine: its own store (and so its own claims, token and TTL), and what it said. */
function machine(s3: S3, writer: string, ttlS = 600) {
  const said: string[] = [];
  const store = new RemoteStore({
    config: remoteConfig(remoteEnv(s3))!,
    warn: (message) => said.push(message),
    inform: (message) => said.push(message),
    secrets: [],
    deadlineMs: remoteDeadlineMs({}),
    writer,
    claimTtlMs: ttlS * 1000,
  });
  return { store, said };
}

/** How a machine finds the reply to request `key` (as src/runner/replies/memo.ts does). */
const replyOf = (store: RemoteStore, key: string, refused = false): ReplyLookup => ({
  lookup: () => store.getKeyed(replyName(FOLDER, key)),
  refused: () => refused,
});

const SEND: ClaimOutcome = { kind: "send" };

const until = async (done: () => Promise<boolean>) => {
  while (!(await done())) await new Promise((wake) => setTimeout(wake, 10));
};

/** Who holds a claim in the store now (its writer), or null when there is none. */
async function holderOf(store: RemoteStore, name: string): Promise<string | null> {
  const current = await store.getPlain(name);
  return current === null ? null : (JSON.parse(current.data.toString()) as { writer: string }).writer;
}

/** Two machines on a fresh store, host-a holding the claim on request `key`. */
async function heldByA(key: string) {
  const s3 = await startS3();
  const [a, b] = [machine(s3, "host-a"), machine(s3, "host-b")];
  const name = claimName(FOLDER, key);
  expect(await a.store.claims.claim(name, replyOf(a.store, key))).toEqual(SEND);
  return { s3, a, b, name };
}

describe("claims, races between a read and what follows it", () => {
  it("a release deletes its own claim only: one taken over after the release read it stays", async () => {
    const { s3, a, b, name } = await heldByA("k1");
    await s3.late("GET", "/claims/");
    a.store.claims.release(name); // its reply's upload failed: released, the claim read first
    await until(async () => (await s3.lateAnswers()) === 1); // read: it is host-a's own
    // Meanwhile host-b takes the claim over (the reply it led to was refused as damaged) and sends.
    expect(await b.store.claims.claim(name, replyOf(b.store, "k1", true))).toEqual(SEND);
    await s3.go();
    await a.store.claims.releaseAll(); // its release done
    expect(await holderOf(b.store, name)).toBe("host-b");
  });

  it("a store that refuses a conditional delete (501) has a claim released deleted as before", async () => {
    const s3 = await startS3();
    const a = machine(s3, "host-a");
    const name = claimName(FOLDER, "k5");
    expect(await a.store.claims.claim(name, replyOf(a.store, "k5"))).toEqual(SEND);
    await s3.refuse("DELETE", "/claims/", 501); // DeleteObject with If-Match: not implemented
    a.store.claims.release(name);
    await a.store.claims.releaseAll();
    expect(await s3.refused()).toBe(1);
    expect(await holderOf(a.store, name)).toBeNull();
  });

  it("a claim won once the claim waited on went away looks for the reply again before sending", async () => {
    const { s3, a, b, name } = await heldByA("k2");
    await s3.late("GET", "/replies/");
    const waiting = b.store.claims.claim(name, replyOf(b.store, "k2"));
    await until(async () => (await s3.lateAnswers()) === 1); // host-b looked: no reply yet
    // host-a's reply reaches the store, and its claim is released (it was switched off meanwhile).
    expect(await a.store.putKeyed(replyName(FOLDER, "k2"), Buffer.from("the reply"))).toBe(true);
    await a.store.claims.releaseAll();
    await s3.go();
    expect(await waiting).toEqual({ kind: "found", data: Buffer.from("the reply") });
  });

  it("a waiter holds to the TTL its holder's claim says, not its own", async () => {
    const s3 = await startS3();
    const [a, b] = [machine(s3, "host-a", 600), machine(s3, "host-b", 1)];
    const name = claimName(FOLDER, "k3");
    expect(await a.store.claims.claim(name, replyOf(a.store, "k3"))).toEqual(SEND);
    const waiting = b.store.claims.claim(name, replyOf(b.store, "k3"));
    await until(async () => b.said.some((line) => line.includes("waiting for host-a")));
    expect(b.said.join("\n")).toMatch(
      /the first at \d\d:\d\d:\d\d UTC \(its holder's MEDBENCH_CLAIM_TTL_S=600\)/,
    );
    expect(await a.store.putKeyed(replyName(FOLDER, "k3"), Buffer.from("the reply"))).toBe(true);
    a.store.claims.answered(name);
    expect(await waiting).toEqual({ kind: "found", data: Buffer.from("the reply") });
  });

  it("a renewal under way when its claim is answered leaves it answered, not held again", async () => {
    const s3 = await startS3();
    const a = machine(s3, "host-a", 0.3); // renewed every 0.1 s
    const name = claimName(FOLDER, "k4");
    expect(await a.store.claims.claim(name, replyOf(a.store, "k4"))).toEqual(SEND);
    await s3.late("PUT", "/claims/");
    await until(async () => (await s3.lateAnswers()) === 1); // a renewal written, its answer on its way
    expect(await a.store.putKeyed(replyName(FOLDER, "k4"), Buffer.from("the reply"))).toBe(true);
    a.store.claims.answered(name);
    const released = a.store.claims.releaseAll(); // the end of the run: nothing is held
    await s3.go();
    await released;
    expect(await holderOf(a.store, name)).toBe("host-a"); // an answered claim stays
  });
  it("a claim read while it is replaced is one version: the ETag of the bytes read", async () => {
    // A read pairing the new ETag with the old bytes would let a machine replace, by that ETag, a claim it
    // never read (scripts/s3-server.mjs, oneRequestAKey). Each round races one replacement with one read.
    const s3 = await startS3();
    const [a, b] = [machine(s3, "host-a"), machine(s3, "host-b")];
    const name = claimName(FOLDER, "k1");
    let { etag } = await a.store.putClaim(name, Buffer.from("round 0"));
    const mismatched: string[] = [];
    for (let round = 1; round <= 150; round++) {
      const [written, read] = await Promise.all([
        a.store.putClaim(name, Buffer.from(`round ${round} `.repeat(round)), etag),
        // The read leaves 0 to 7 ms after the write, so that some rounds meet it halfway.
        new Promise((wake) => setTimeout(wake, round % 8)).then(() => b.store.getPlain(name)),
      ]);
      etag = written.etag;
      const md5 = createHash("md5").update(read!.data).digest("hex");
      if (read!.etag.replace(/"/g, "") !== md5) mismatched.push(`round ${round}: ${read!.data.toString()}`);
    }
    expect(mismatched).toEqual([]);
  });
});
