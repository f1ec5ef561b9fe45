// Claims on model requests in the shared remote cache, so that machines building the same model at the
// same time (without --shard) send each request once. Before sending a request it did not find, a machine
// writes claims/<folder>/<request key> with a conditional write (If-None-Match: *, which AWS S3, MinIO and
// scripts/s3-server.mjs refuse with 412 when the name exists). The one whose write succeeds sends; the
// others wait for its reply to appear, and take the request over when the claim outlives its time (its
// machine died), when its machine is this one and its process is gone, or when the reply it led to was
// refused as damaged. An answered request's claim stays (a small object beside its reply): so a claim
// written after a failed lookup always means no reply was there. An unanswered one is deleted at the end of
// the run, so the next machine sends it. A store that does not refuse the second write is found by a probe:
// one warning, and the run goes on without claims (machines may then send a request twice, as before).
import { randomBytes } from "../util/builtins.js";
import { hostname } from "node:os";
import { processAlive } from "../util/fsutil.js";
import type { RemoteStore } from "./store.js";

const POLL_MS = 500;

export const claimName = (folder: string, key: string) => `claims/${folder}/${key}`;

interface ClaimBody {
  writer: string;
  token: string; // this process's: its own claim, read back, is its own
  host: string;
  pid: number;
}

export type ClaimOutcome = { kind: "send" } | { kind: "found"; data: Buffer } | { kind: "unclaimed" };

export class RequestClaims {
  private readonly token = randomBytes(8).toString("hex");
  private readonly held = new Set<string>();
  private support: Promise<boolean> | null = null;

  constructor(
    private readonly store: RemoteStore,
    private readonly writer: string,
    private readonly warn: (message: string) => void,
    private readonly ttlMs: number,
  ) {}

  /** Once per process: does the store refuse a second conditional write of one name? */
  private supported(): Promise<boolean> {
    return (this.support ??= this.probe());
  }

  private async probe(): Promise<boolean> {
    const name = `claims/.probe-${this.token}`;
    const first = await this.store.putIfAbsent(name, Buffer.from("probe"));
    if (first !== "created") return false;
    const second = await this.store.putIfAbsent(name, Buffer.from("probe"));
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
   * Claims a request before it is sent. `lookup` reads its reply from the remote; `refused`: whether that
   * reply was refused as damaged. Returns "send" (this process holds the claim), "found" (the reply another
   * machine received while this one waited), or "unclaimed" (no claims here: send it, as without claims).
   */
  async claim(
    name: string,
    lookup: () => Promise<Buffer | null>,
    refused: () => boolean,
  ): Promise<ClaimOutcome> {
    if (!(await this.supported())) return { kind: "unclaimed" };
    let firstSeen: number | null = null;
    for (;;) {
      const written = await this.write(name);
      if (written === "down") return { kind: "unclaimed" };
      if (written === "created") return { kind: "send" };
      const data = await lookup();
      if (data !== null) return { kind: "found", data };
      firstSeen ??= Date.now();
      // Measured on this machine's clock from when it first saw the claim: no two clocks are compared.
      const expired = Date.now() - firstSeen >= this.ttlMs;
      if (expired || refused() || (await this.deadHolder(name))) {
        await this.store.removeQuietly([name]);
        firstSeen = null;
        continue;
      }
      await new Promise((wake) => setTimeout(wake, POLL_MS + Math.random() * POLL_MS));
    }
  }

  /** A conditional write of this process's claim; its own claim read back (a retried write) counts. */
  private async write(name: string): Promise<"created" | "exists" | "down"> {
    const body: ClaimBody = { writer: this.writer, token: this.token, host: hostname(), pid: process.pid };
    const written = await this.store.putIfAbsent(name, Buffer.from(JSON.stringify(body)));
    const mine =
      written === "created" || (written === "exists" && (await this.holder(name))?.token === this.token);
    if (!mine) return written;
    this.held.add(name); // released at the end of the run unless answered
    return "created";
  }

  private async holder(name: string): Promise<ClaimBody | null> {
    const data = await this.store.getPlain(name);
    try {
      return data === null ? null : (JSON.parse(data.toString("utf8")) as ClaimBody);
    } catch {
      return null;
    }
  }

  /** A claim this machine wrote in an earlier run that was killed: its process is gone. */
  private async deadHolder(name: string): Promise<boolean> {
    const holder = await this.holder(name);
    if (!holder || holder.host !== hostname() || holder.token === this.token) return false;
    return !processAlive(holder.pid);
  }

  /** A claim this process holds was answered: it stays in the store, and is not released at the end. */
  answered(name: string): void {
    this.held.delete(name);
  }

  /** Releases every claim still held (the end of the run: what was not answered is free again). */
  async releaseAll(): Promise<void> {
    const names = [...this.held];
    this.held.clear();
    await this.store.removeQuietly(names);
  }
}
