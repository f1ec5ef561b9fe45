// The shared remote cache on an S3-compatible object store (MEDBENCH_REMOTE=s3://bucket/prefix). It holds
// what the local cache holds, under the same names: stage outputs by content hash, stage manifests by stage
// key, model replies by request key. Objects are immutable and written whole (one PutObject of complete
// bytes), and every read is checked against a hash: a damaged object is refused (one warning) and the thing
// it held is recomputed. The remote is an accelerator, never a dependency: the first failure of any other
// kind (the server gone, a refused credential) switches it off for the rest of the process with one warning,
// and everything carries on with the local cache. Credentials come from the AWS SDK's default chain (the
// standard environment variables and profiles); nothing here writes or prints them.
import type { S3Client } from "@aws-sdk/client-s3";
import { hostname, userInfo } from "node:os";
import { sha256Hex } from "../hash/sha256.js";
import { RequestClaims } from "./claims.js";
import { isThrottled, RemotePace, THROTTLED_TRIES, throttleWaitMs } from "./pace.js";
import { DiagnosticError } from "../errors.js";
import { opened, remoteConfig, type RemoteConfig } from "./opened.js";

// Loaded only when a remote is configured: the SDK is large, and most runs never need it.
const sdk = () => import("@aws-sdk/client-s3");

/** Keyed objects (manifests, replies) carry the hash of their payload on their first line. */
const ENVELOPE = "medbench-object sha256=";

export function envelope(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${ENVELOPE}${sha256Hex(payload)}\n`), payload]);
}

function unwrap(data: Buffer): Buffer | null {
  const nl = data.indexOf(10);
  if (nl < 0) return null;
  const head = data.subarray(0, nl).toString("latin1");
  if (!head.startsWith(ENVELOPE)) return null;
  const payload = data.subarray(nl + 1);
  return sha256Hex(payload) === head.slice(ENVELOPE.length) ? payload : null;
}

/** The store's object names (relative to the prefix), the local cache's layout: content objects by hash,
 *  stage manifests by stage key, replies by namespace folder and request key. */
export const objectName = (hash: string) => `objects/${hash.slice(0, 2)}/${hash}`;

/** What a keyed object's name names: a stage manifest's key, or a reply's folder and request key. */
export function keyedName(name: string): { stage: string } | { folder: string; key: string } | null {
  const stage = /^stages\/([0-9a-f]{64})\.json$/.exec(name);
  if (stage) return { stage: stage[1]! };
  const reply = /^replies\/([A-Za-z0-9_-]+)\/([0-9a-f]{64})$/.exec(name);
  return reply ? { folder: reply[1]!, key: reply[2]! } : null;
}

/**
 * The local cache and the shared remote alike, by these names: content objects by sha256 and keyed payloads
 * (a stage manifest, a reply), each checked when read (null: absent, damaged or unreachable) and written
 * whole (false: not written). `medbench cache push|pull` copies one into the other
 * (src/runner/upkeep/sync.ts); the local one is src/runner/upkeep/inventory.ts's `localStore`.
 */
export interface Store {
  getObject(hash: string): Promise<Buffer | null>;
  getKeyed(name: string): Promise<Buffer | null>;
  putObject(hash: string, data: () => Buffer): Promise<boolean>;
  putKeyed(name: string, payload: Buffer): Promise<boolean>;
  /** The damaged copies refused so far. */
  readonly refused: number;
}

const UPLOADS_AT_ONCE = 8;
/** The object metadata naming the machine that wrote an object (x-amz-meta-medbench-writer). */
const WRITER = "medbench-writer";

/** Who writes from this process, for the objects' metadata: MEDBENCH_MACHINE_ID (a CI job's name), or
 *  user@host. Never a credential; only letters, digits and . _ @ - (S3 metadata is ASCII). */
export function writerId(env: Record<string, string | undefined>): string {
  let id = env.MEDBENCH_MACHINE_ID?.trim();
  if (!id) {
    let user = "unknown";
    try {
      user = userInfo().username;
    } catch {
      /* no passwd entry (a container): the host alone */
    }
    id = `${user}@${hostname()}`;
  }
  return id.replace(/[^A-Za-z0-9._@-]/g, "_").slice(0, 200);
}
/** Each call's deadline (connect, send, wait, read), unless MEDBENCH_REMOTE_TIMEOUT_S says otherwise. */
const DEFAULT_DEADLINE_S = 30;
const DEFAULT_CLAIM_TTL_S = 600;

/** A number of seconds from the environment, in ms: `fallback` when unset; a user mistake when it is not a
 *  number between 0 and `most`. */
function secondsFromEnv(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  most: number,
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > most)
    throw new DiagnosticError([
      {
        file: `$${name}`,
        message: `${JSON.stringify(raw)} is not a number of seconds between 0 and ${most}`,
        fix: `set it like ${name}=${fallback}, or unset it (${fallback} s)`,
      },
    ]);
  return seconds * 1000;
}

/** The per-call deadline in ms: MEDBENCH_REMOTE_TIMEOUT_S (seconds, > 0), else 30 s. */
export const remoteDeadlineMs = (env: Record<string, string | undefined>): number =>
  secondsFromEnv(env, "MEDBENCH_REMOTE_TIMEOUT_S", DEFAULT_DEADLINE_S, 3600);

/** How long a claim holds before another machine takes its request over: MEDBENCH_CLAIM_TTL_S, else 600
 *  s. */
const claimTtlMs = (env: Record<string, string | undefined>): number =>
  secondsFromEnv(env, "MEDBENCH_CLAIM_TTL_S", DEFAULT_CLAIM_TTL_S, 86_400);

/** What a remote store is opened with (`openRemote` reads it from the environment). */
export interface RemoteOpening {
  config: RemoteConfig;
  /** Where the store says it failed (the build goes on with the local cache only). */
  warn: (message: string) => void;
  /** Where the claims say what other machines are sending (claims.ts). */
  inform?: (message: string) => void;
  /** The credentials, kept out of every message. */
  secrets: string[];
  /** The deadline of one call. */
  deadlineMs: number;
  /** This machine, recorded on every object it writes (`writerId`). */
  writer: string;
  /** How long a claim holds before another machine takes its request over. */
  claimTtlMs: number;
}

export class RemoteStore implements Store {
  private down: string | null = null;
  private readonly damaged = new Set<string>();
  private readonly pending = new Set<Promise<boolean>>();
  private readonly queue: (() => Promise<void>)[] = [];
  private running = 0;
  /** Counters for `cache status` and the tests. */
  readonly counts = { gets: 0, hits: 0, puts: 0 };
  /** Keyed objects read from the remote in this process (name relative to the prefix) -> the machine that
   *  wrote each (its metadata; "(unrecorded)" for an object written without it). */
  readonly writers = new Map<string, string>();

  readonly config: RemoteConfig;
  private readonly warn: (message: string) => void;
  private readonly secrets: string[];
  private readonly deadlineMs: number;
  private readonly writer: string;

  constructor(opening: RemoteOpening) {
    this.config = opening.config;
    this.warn = opening.warn;
    this.secrets = opening.secrets;
    this.deadlineMs = opening.deadlineMs;
    this.writer = opening.writer;
    const inform = opening.inform ?? (() => undefined);
    this.claims = new RequestClaims(this, this.writer, this.warn, inform, opening.claimTtlMs);
  }

  /** Throttled calls and every call's latency (pace.ts). */
  readonly pace = new RemotePace();
  /** Claims on requests, so that machines sharing this store send each once (claims.ts). */
  readonly claims: RequestClaims;

  /** One call with its deadline: a store that accepts and never answers fails it (and switches the remote
   *  off) instead of holding the build forever. A throttled call is tried again after a wait. */
  private async send<T = unknown>(command: object): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.sendTimed<T>(command, "paced");
      } catch (e) {
        if (!isThrottled(e) || attempt >= THROTTLED_TRIES) throw e;
        this.pace.throttled++;
        await new Promise((wake) => setTimeout(wake, throttleWaitMs(attempt)));
      }
    }
  }

  /** One call, timed; its deadline passed while this process was stopped (SIGSTOP, a suspended machine)
   *  is no fault of the store: that call is made once more. `client`: "single" tries once (a claim). */
  private async sendTimed<T>(command: object, client: "paced" | "single"): Promise<T> {
    return resumable(this.deadlineMs, async () => {
      const started = performance.now();
      const answer = await this.sendOnce<T>(command, client);
      this.pace.answered(performance.now() - started);
      return answer;
    });
  }

  private async sendOnce<T>(command: object, which: "paced" | "single"): Promise<T> {
    const client = await this.client(which);
    const send = client.send.bind(client) as (
      request: object,
      options: { abortSignal: AbortSignal },
    ) => Promise<unknown>;
    return (await send(command, { abortSignal: AbortSignal.timeout(this.deadlineMs) })) as T;
  }

  private readonly clients = new Map<string, Promise<S3Client>>();

  /** The SDK's client: "paced" lets the SDK try a call twice; "single" once (a claim write, which must
   *  cost no more than sending unclaimed when the store throttles it). */
  private client(which: "paced" | "single" = "paced"): Promise<S3Client> {
    // The SDK's notice about future Node versions is not ours to print on every command.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
    let made = this.clients.get(which);
    if (!made) {
      made = sdk().then(
        ({ S3Client }) =>
          new S3Client({
            region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
            ...(this.config.endpoint ? { endpoint: this.config.endpoint, forcePathStyle: true } : {}),
            maxAttempts: which === "paced" ? 2 : 1,
            // The SDK only logs a passed requestTimeout unless told to throw it.
            requestHandler: {
              connectionTimeout: Math.min(3000, this.deadlineMs),
              requestTimeout: this.deadlineMs,
              throwOnRequestTimeout: true,
            },
          }),
      );
      this.clients.set(which, made);
    }
    return made;
  }

  get available(): boolean {
    return this.down === null;
  }

  /** Why the remote was switched off (credentials redacted), or null while it works. */
  get failure(): string | null {
    return this.down;
  }

  /** Whether a keyed object was refused as damaged in this process. */
  wasRefused(key: string): boolean {
    return this.damaged.has(key);
  }

  /** How many damaged objects were refused so far. */
  get refused(): number {
    return this.damaged.size;
  }

  private name(key: string): string {
    return this.config.prefix + key;
  }

  /** A call failed: the remote is switched off, unless the call was only throttled (then it is skipped). */
  private fail(e: unknown, skippable = true): void {
    // A store that answers nothing but "slow down" for many calls in a row is as good as down.
    if (skippable && isThrottled(e) && this.pace.skip()) return;
    if (this.down !== null) return;
    let why = isDeadline(e)
      ? `no answer within ${this.deadlineMs / 1000} s, the deadline of one call (MEDBENCH_REMOTE_TIMEOUT_S)`
      : e instanceof Error
        ? `${e.name}: ${e.message}`
        : String(e);
    for (const secret of this.secrets) if (secret.length >= 4) why = why.split(secret).join("***");
    this.down = why;
    this.warn(
      `remote cache ${this.config.url} failed (${why.slice(0, 200)}); ` +
        "continuing with the local cache only for the rest of this run " +
        "(`medbench cache push` uploads what it made)",
    );
    // The claims this process holds would keep other machines waiting for replies that cannot come now.
    void this.claims.releaseAll();
  }

  private async getRaw(
    key: string,
    onWriter?: (writer: string) => void,
    onTag?: (etag: string) => void,
  ): Promise<Buffer | null> {
    if (this.down !== null) return null;
    this.counts.gets++;
    const { GetObjectCommand } = await sdk();
    const read = async () => {
      const response = await this.send<{
        Body?: { transformToByteArray(): Promise<Uint8Array> };
        Metadata?: Record<string, string>;
        ETag?: string;
      }>(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.name(key) }));
      onWriter?.(response.Metadata?.[WRITER] ?? "(unrecorded)");
      onTag?.(response.ETag ?? "");
      return Buffer.from(await withDeadline(response.Body!.transformToByteArray(), this.deadlineMs));
    };
    try {
      return await resumable(this.deadlineMs, read); // the body's read too may outlive a stop
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if ((e as Error).name === "NoSuchKey" || status === 404) return null;
      this.fail(e);
      return null;
    }
  }

  private refuse(key: string): null {
    if (!this.damaged.has(key)) {
      this.damaged.add(key);
      this.warn(
        `remote cache object ${this.name(key)} is damaged (its content does not match its hash): refused; ` +
          "what it held is made again and uploaded whole",
      );
    }
    return null;
  }

  /** A content object (named by the sha256 of its bytes), checked; null when absent, damaged or down. */
  async getObject(hash: string): Promise<Buffer | null> {
    const data = await this.getRaw(objectName(hash));
    if (data === null) return null;
    if (sha256Hex(data) !== hash) return this.refuse(objectName(hash));
    this.counts.hits++;
    return data;
  }

  /** A keyed object (a manifest, a reply), checked against the hash it carries. */
  async getKeyed(key: string): Promise<Buffer | null> {
    let writer = "(unrecorded)";
    const data = await this.getRaw(key, (recorded) => (writer = recorded));
    if (data === null) return null;
    const payload = unwrap(data);
    if (payload === null) return this.refuse(key);
    this.writers.set(key, writer);
    this.counts.hits++;
    return payload;
  }

  putObject(hash: string, data: () => Buffer): Promise<boolean> {
    return this.enqueue(objectName(hash), data);
  }

  /** `after`: uploads that must be in place first (a manifest goes up after the outputs it names). Resolves
   *  to whether the object is now in the store. */
  putKeyed(key: string, payload: Buffer, after: Promise<unknown>[] = []): Promise<boolean> {
    return this.enqueue(key, () => envelope(payload), after);
  }

  /** Uploads in the background, a few at once; settle() waits for them. A failure switches the remote off.
   *  Resolves to whether the upload went through (false: skipped, failed, or the remote is off). */
  private enqueue(key: string, bytes: () => Buffer, after: Promise<unknown>[] = []): Promise<boolean> {
    if (this.down !== null) return Promise.resolve(false);
    let done!: (uploaded: boolean) => void;
    let uploaded = false;
    const pending = new Promise<boolean>((resolve) => (done = resolve));
    this.pending.add(pending);
    const job = async () => {
      try {
        let body: Buffer | null = null;
        try {
          body = bytes();
        } catch {
          /* gone from the local cache meanwhile: nothing to upload */
        }
        if (this.down === null && body !== null) {
          this.counts.puts++;
          const { PutObjectCommand } = await sdk();
          await this.send(
            new PutObjectCommand({
              Bucket: this.config.bucket,
              Key: this.name(key),
              Body: body,
              // Provenance, for `verify --live` and a team's audit (docs/remote-cache.md, "Trust").
              Metadata: { [WRITER]: this.writer },
            }),
          );
          uploaded = true;
        }
      } catch (e) {
        this.fail(e);
      } finally {
        this.pending.delete(pending);
        done(uploaded);
      }
    };
    if (after.length === 0) this.queue.push(job);
    else
      void Promise.all(after).then(() => {
        this.queue.push(job);
        this.pump();
      });
    this.pump();
    return pending;
  }

  private pump(): void {
    while (this.running < UPLOADS_AT_ONCE && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running++;
      void job().finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /** Waits for every upload started so far. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    await this.claims.releaseAll();
    const slow = this.pace.summary(this.config.url);
    if (slow !== null && !this.paceSaid) this.warn(slow);
    this.paceSaid ||= slow !== null;
  }
  private paceSaid = false;

  /** Every object name under a folder of the store (relative to the prefix), with its size; null when the
   *  remote is down (it warned, and `failure` says why). */
  async list(folder: string): Promise<Map<string, number> | null> {
    const out = new Map<string, number>();
    if (this.down !== null) return null;
    try {
      const { paginateListObjectsV2 } = await sdk();
      for await (const page of paginateListObjectsV2(
        { client: await this.client() },
        { Bucket: this.config.bucket, Prefix: this.name(folder) },
      ))
        for (const object of page.Contents ?? [])
          out.set(object.Key!.slice(this.config.prefix.length), object.Size ?? 0);
    } catch (e) {
      this.fail(e, false);
      return null;
    }
    return out;
  }

  /** Writes a claim only if no object of that name exists (If-None-Match: *) or, given `etag`, only if the
   *  object there is still the one read (If-Match): "created"; "exists" (412, or 409 for a concurrent
   *  conditional write of the name); "gone" (If-Match on a name without an object: 404); "unsupported"
   *  (If-Match refused as such: 400 or 501); "throttled" (503
   *  SlowDown or 429: tried once, never waited on); "down" (the remote failed: it warned and is off). The
   *  body is not enveloped. */
  async putClaim(key: string, body: Buffer, etag?: string): Promise<{ written: ClaimWrite; etag?: string }> {
    if (this.down !== null) return { written: "down" };
    try {
      const { PutObjectCommand } = await sdk();
      const condition = etag === undefined ? { IfNoneMatch: "*" } : { IfMatch: etag };
      const put = { Bucket: this.config.bucket, Key: this.name(key), Body: body, ...condition };
      const command = new PutObjectCommand({ ...put, Metadata: { [WRITER]: this.writer } });
      const answer = await this.sendTimed<{ ETag?: string }>(command, "single");
      return { written: "created", etag: answer.ETag ?? "" };
    } catch (e) {
      return { written: this.claimRefusal(e, etag !== undefined) };
    }
  }

  /** What a failed claim write means (putClaim). */
  private claimRefusal(e: unknown, replacing: boolean): ClaimWrite {
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 412 || status === 409) return "exists";
    if (status === 404 && replacing) return "gone";
    if (isThrottled(e)) return "throttled";
    // A store that does not take If-Match at all: the caller replaces the claim the older way.
    if ((status === 400 || status === 501) && replacing) return "unsupported";
    this.fail(e);
    return "down";
  }

  /** A small keyed object written by putClaim, unchecked (it carries no hash), with its ETag; null when
   *  absent or down. */
  async getPlain(key: string): Promise<{ data: Buffer; etag: string } | null> {
    let etag = "";
    const data = await this.getRaw(key, undefined, (tag) => (etag = tag));
    return data === null ? null : { data, etag };
  }

  /** Deletes objects, quietly: a failure leaves them (a claim then expires on its own). `evenIfOff`: also
   *  when the remote was switched off (claims released as it goes off: the store may still take them). */
  async removeQuietly(keys: string[], evenIfOff = false): Promise<void> {
    if ((this.down !== null && !evenIfOff) || keys.length === 0) return;
    try {
      await this.remove(keys);
    } catch {
      /* a claim left behind expires; an unreachable remote has warned already or will on its next call */
    }
  }

  /** Deletes a claim only while it is the very object read (If-Match: its ETag), so that a claim another
   *  machine took over meanwhile is left to it: AWS S3 answers 412 when the ETag differs, 404 when the name
   *  is gone (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html; the SDK's
   *  DeleteObjectRequest.IfMatch). A store that refuses the header as such (400, 501) has it deleted
   *  unconditionally, as putClaim falls back, and so has one whose ETag the store did not say (""); any
   *  other failure leaves it (a claim left behind expires). */
  async removeClaim(key: string, etag: string, evenIfOff = false): Promise<void> {
    if (this.down !== null && !evenIfOff) return;
    if (!etag) return this.removeQuietly([key], evenIfOff);
    try {
      const { DeleteObjectCommand } = await sdk();
      await this.send(
        new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.name(key), IfMatch: etag }),
      );
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 400 || status === 501) await this.removeQuietly([key], evenIfOff);
    }
  }

  async remove(keys: string[]): Promise<void> {
    const { DeleteObjectsCommand } = await sdk();
    for (let i = 0; i < keys.length; i += 1000)
      await this.send(
        new DeleteObjectsCommand({
          Bucket: this.config.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((key) => ({ Key: this.name(key) })) },
        }),
      );
  }
}

/** What a conditional write of a claim came to (RemoteStore.putClaim). */
export type ClaimWrite = "created" | "exists" | "gone" | "throttled" | "unsupported" | "down";

/** A call that passed its deadline: the SDK's abort (AbortSignal.timeout), its request timeout, or a body
 *  read that stalled (withDeadline). */
function isDeadline(e: unknown): boolean {
  const name = (e as { name?: string }).name ?? "";
  const message = (e as { message?: string }).message ?? "";
  if (isClosedSocket(e)) return false;
  return name === "AbortError" || name === "TimeoutError" || message.startsWith("no answer within");
}

/** A call whose deadline was seen far past its time (the process did not run meanwhile: stopped, or its
 *  machine suspended) is made once more: the store may well have answered in time. So is one that met a
 *  connection the store closed meanwhile (its idle keep-alive sockets), a moment later, on a new one. */
async function resumable<T>(deadlineMs: number, call: () => Promise<T>): Promise<T> {
  for (let again = false; ; again = true) {
    const started = performance.now();
    try {
      return await call();
    } catch (e) {
      const late = isDeadline(e) && performance.now() - started > 1.5 * deadlineMs;
      if (again || !(late || isClosedSocket(e))) throw e;
      await new Promise((wake) => setTimeout(wake, 100)); // the closed sockets' events handled first
    }
  }
}

/** A connection the other end closed under a request (the SDK names it TimeoutError, "socket hang up"). */
function isClosedSocket(e: unknown): boolean {
  const { message = "", code = "" } = e as { message?: string; code?: string };
  return /socket hang up/.test(message) || code === "ECONNRESET" || code === "EPIPE";
}

/** A body read that stalls after the headers fails at the deadline as well. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The remote named by the environment (one per process and address), or null. */
export function openRemote(
  env: Record<string, string | undefined>,
  warn: (message: string) => void,
  inform?: (message: string) => void,
): RemoteStore | null {
  const config = remoteConfig(env);
  if (!config) return null;
  const secrets = [env.AWS_SECRET_ACCESS_KEY, env.AWS_SESSION_TOKEN, env.AWS_ACCESS_KEY_ID].filter(
    (secret): secret is string => !!secret,
  );
  const store = new RemoteStore({
    config,
    warn,
    inform,
    secrets,
    deadlineMs: remoteDeadlineMs(env),
    writer: writerId(env),
    claimTtlMs: claimTtlMs(env),
  });
  opened.add(store);
  return store;
}
