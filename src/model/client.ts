// One request through a route, with retries: what a reply or an error means is the route's protocol's
// (src/model/protocol.ts: its path, headers, "is this 2xx a reply", "what does this error mean"); this
// module moves the bytes. Transient errors (per the protocol: for OpenAI's, 408, 409, 429, 5xx) and
// successes that are no reply are retried with exponential backoff and jitter, the server's wait honoured;
// a rate limit pauses the whole route (src/model/pacer.ts); resets and timeouts are retried; other HTTP
// errors are refusals, returned as such. Each request has one deadline (retry.max_total_s) that its tries
// and the waits between them share. Whatever the server sends back is redacted of secrets before it leaves
// this module.
import type { Route } from "./registry.js";
import type { Json } from "../util/json.js";
import type { ErrorReading, Protocol, RoutedModel } from "./protocol.js";
import type { RateAdvice } from "./rate-limit.js";
import { redact, redactJson } from "./redact.js";
import { agentFor, postJson, targetOf, type HttpError, type HttpReply, type Target } from "./http.js";
import { backoffMs } from "./rate-limit.js";
import { estimatedTokens, pacerFor, type Pacer, type Ticket } from "./pacer.js";
import { Replicas } from "./replicas.js";

export type CallOutcome =
  // server: which of a route's replicas answered (only for a route with replicas; for audit)
  | { kind: "reply"; status: number; body: Json; attempts: number; server?: string }
  // non-transient: the request itself is rejected (stopsRoute: why no request of the route can succeed)
  | { kind: "refused"; status: number; body: string; attempts: number; stopsRoute?: string }
  // transient errors until the deadline or tries ran out (timedOut: the last try got no answer in time)
  | { kind: "failed"; error: string; attempts: number; timedOut?: boolean }
  // the caller stopped it (the route is failing): not sent, not an error
  | { kind: "cancelled"; attempts: number };

export interface CallHooks {
  onRetry?: (why: string) => void;
  /** Values to redact from everything the server sends back (the route's key, header values). */
  secrets?: readonly string[];
  /** Aborts the request and its waits (the stage stops). */
  signal?: AbortSignal;
  /** The body already serialised (the bytes its key was hashed from), sent as it is. */
  payload?: Buffer;
  /** Before each try after the first: true stops the request, not sent again ("cancelled"), since its
   *  reply is to be had elsewhere (another machine took its claim over and stored it). */
  beforeRetry?: () => Promise<boolean>;
  /** The folder of the pace ledgers this machine's builds share (src/model/pace-ledger.ts). */
  paceDir?: string;
}

/** The protocol's path under a base URL, a query (a gateway's key: a secret) kept after the path. */
function requestUrl(baseUrl: string, path: string): URL {
  const url = new URL(baseUrl);
  url.pathname = url.pathname.replace(/\/$/, "") + path;
  return url;
}

interface Prepared {
  protocol: Protocol;
  path: string;
  base_url: string;
  headersIn: Route["headers"];
  apiKey: string | undefined;
  secretsIn: readonly string[] | undefined;
  /** The route's servers: base_url's first, then each replica's. */
  targets: Target[];
  replicas: Replicas | null;
  secrets: string[];
}
const preparedRoutes = new WeakMap<Route, Prepared>();

/** The route's URL, headers, agent and secrets, built once per route (not per request) for a key. */
function prepared(
  route: Route,
  protocol: Protocol,
  path: string,
  apiKey: string | undefined,
  secretsIn?: readonly string[],
): Prepared {
  const had = preparedRoutes.get(route);
  const same = had?.base_url === route.base_url && had.headersIn === route.headers && had.apiKey === apiKey;
  if (same && had.secretsIn === secretsIn && had.protocol === protocol && had.path === path) return had;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "medbench",
    ...(route.headers ?? {}),
    ...protocol.headers(apiKey),
  };
  const secrets = [...(secretsIn ?? []), ...(apiKey ? [apiKey] : [])];
  const written = [
    route.base_url_with_secrets ?? route.base_url,
    ...(route.replicas_with_secrets ?? route.replicas ?? []),
  ];
  const targets = written.map((base) => ({
    ...targetOf(requestUrl(base, path), headers, agentFor({ ...route, base_url: base })),
    maxReplyBytes: route.max_reply_mb * 2 ** 20,
  }));
  const servers = [route.base_url, ...(route.replicas ?? [])];
  const replicas = servers.length > 1 ? new Replicas(servers) : null;
  const made = {
    protocol,
    path,
    base_url: route.base_url,
    headersIn: route.headers,
    apiKey,
    secretsIn,
    targets,
    replicas,
    secrets,
  };
  preparedRoutes.set(route, made);
  return made;
}

/** Sends one request of `model` in the route's protocol, with its tries, and says what came of it. */
export async function send(
  { route, protocol, model }: RoutedModel,
  body: Json,
  apiKey: string | undefined,
  hooks: CallHooks = {},
): Promise<CallOutcome> {
  const { targets, replicas, secrets } = prepared(
    route,
    protocol,
    protocol.path(model),
    apiKey,
    hooks.secrets,
  );
  const payload = hooks.payload ?? Buffer.from(JSON.stringify(body), "utf8");
  const tokens = estimatedTokens(payload, protocol.outputBound(body));
  return new CompletionCall(
    { route, protocol, servers: { targets, replicas }, payload, tokens, secrets },
    hooks,
  ).run();
}

/** One request as its tries send it: the route and its protocol, the servers (base_url's, then each
 *  replica's), the body's bytes with the tokens the pacer counts for them, and the secrets its errors are
 *  redacted of. */
interface CallPlan {
  route: Route;
  protocol: Protocol;
  servers: { targets: Target[]; replicas: Replicas | null };
  payload: Buffer;
  tokens: number;
  secrets: readonly string[];
}

/** What one try leaves: the request's outcome, the end of its tries (a failure), or another try. */
// elsewhere: the try failed on a replica and the next goes to another at once, spending no try
type Tried =
  | { outcome: CallOutcome }
  | { stop: true }
  | { elsewhere: true }
  | { waitMs: number | null; limited: boolean };
const RETRY: Tried = { waitMs: null, limited: false };

/** One request's tries, within its deadline, and the waits between them. */
class CompletionCall {
  private readonly pacer: Pacer;
  private readonly deadline: number;
  private lastError = "";
  private timedOut = false;
  private attempt = 0; // tries sent
  private spent = 0; // tries that count against max_attempts: all but 429s
  private ticket: Ticket = { epoch: 0, cost: 0 }; // the pacer's for the try under way
  private tryOpen = false; // whether the pacer has not yet heard how that try ended
  private server = 0; // the index of the server of the try under way
  private readonly failedServers = new Set<number>(); // replicas that failed this request

  private readonly route: Route;
  private readonly protocol: Protocol;
  private readonly servers: CallPlan["servers"];
  private readonly payload: Buffer;
  private readonly tokens: number;
  private readonly secrets: readonly string[];

  constructor(
    plan: CallPlan,
    private readonly hooks: CallHooks,
  ) {
    this.route = plan.route;
    this.protocol = plan.protocol;
    this.servers = plan.servers;
    this.payload = plan.payload;
    this.tokens = plan.tokens;
    this.secrets = plan.secrets;
    this.pacer = pacerFor(plan.route, hooks.paceDir);
    this.deadline = Date.now() + plan.route.retry.max_total_s * 1000;
  }

  private remaining(): number {
    return this.deadline - Date.now();
  }

  private cancelled(): CallOutcome {
    return { kind: "cancelled", attempts: this.attempt };
  }

  async run(): Promise<CallOutcome> {
    while (this.spent < this.route.retry.max_attempts) {
      if (this.hooks.signal?.aborted) return this.cancelled();
      // The route may be paused or paced: this request waits its turn, within its deadline.
      const turn = await this.pacer.turn(this.tokens, this.deadline, this.hooks.signal);
      if (turn === "aborted") return this.cancelled();
      if (turn === "late") {
        this.lastError ||= "rate limited: the route's pause outlasted the request's deadline";
        break;
      }
      this.ticket = turn;
      this.tryOpen = true;
      const budget = Math.min(this.route.timeout_s * 1000, this.remaining());
      if (budget <= 0) {
        this.endTry("failed");
        break;
      }
      this.attempt++;
      this.spent++;
      this.timedOut = false;
      const tried = await this.tryOnce(budget);
      if ("outcome" in tried) return tried.outcome;
      if ("stop" in tried) break;
      if ("elsewhere" in tried) continue;
      const next = await this.beforeNextTry(tried.waitMs, tried.limited);
      if (next === "cancelled") return this.cancelled();
      if (next === "stop") break;
    }
    return {
      kind: "failed",
      error: redact(this.lastError || "no time left for a try", this.secrets),
      attempts: this.attempt,
      ...(this.timedOut ? { timedOut: this.timedOut } : {}),
    };
  }

  private async tryOnce(budget: number): Promise<Tried> {
    const { targets, replicas } = this.servers;
    this.server = replicas?.pick() ?? 0;
    replicas?.begin(this.server);
    try {
      const res = await postJson(targets[this.server]!, this.payload, budget, this.hooks.signal);
      const tried = this.answered(res);
      // A rate limit or a stopped route told the pacer already; a 5xx says nothing of the limit.
      this.endTry(res.status >= 500 ? "failed" : "answered");
      return this.serverFailed(res.status >= 500, tried);
    } catch (e) {
      this.endTry("failed");
      if (this.hooks.signal?.aborted) return { outcome: this.cancelled() };
      const err = e as HttpError;
      this.timedOut = err.why === "timeout";
      this.lastError =
        err.why === "timeout"
          ? `timeout after ${Math.round(budget) / 1000} s`
          : err.why === "too_large"
            ? tooLargeError(this.route)
            : `connection error (${err.code ?? err.message})`;
      return this.serverFailed(err.why !== "too_large", RETRY);
    } finally {
      replicas?.end(this.server);
    }
  }

  /** Tells the pacer how the try under way ended, once: answered, without an answer, or rate limited. */
  private endTry(how: "answered" | "failed" | RateAdvice): void {
    if (!this.tryOpen) return;
    this.tryOpen = false;
    if (how === "answered") this.pacer.answered(this.ticket);
    else if (how === "failed") this.pacer.failed(this.ticket);
    else this.pacer.limited(this.ticket, how);
  }

  /** With replicas: a server that failed is set aside, and while another may be asked, the request goes to
   *  it at once, spending none of its tries (a dead replica costs its requests nothing). */
  private serverFailed(failed: boolean, tried: Tried): Tried {
    const { replicas } = this.servers;
    if (!replicas) return tried;
    if ("outcome" in tried && tried.outcome.kind === "reply") {
      replicas.answered(this.server);
      return { outcome: { ...tried.outcome, server: replicas.servers[this.server]! } };
    }
    if (!failed || "outcome" in tried || "stop" in tried) return tried;
    replicas.failed(this.server);
    this.failedServers.add(this.server);
    if (!replicas.otherAvailable(this.failedServers)) return tried;
    this.spent--;
    return { elsewhere: true };
  }

  /** What the server's answer means, as the protocol reads it: a reply, a refusal, or another try. */
  private answered(res: HttpReply): Tried {
    const { secrets } = this;
    const text = res.text;
    if (res.status >= 200 && res.status < 300) {
      const success = this.protocol.success(text, res.contentType);
      if ("body" in success) {
        const body = redactJson(success.body, secrets);
        return { outcome: { kind: "reply", status: res.status, body, attempts: this.attempt } };
      }
      this.lastError = success.problem; // an error in a 200 too: a failed try, redacted below
      return RETRY;
    }
    const read = this.protocol.error({ status: res.status, headers: res.headers, text }, this.tokens);
    if (read.kind === "stop_route") {
      this.endTry("failed");
      return { outcome: this.routeStopped(res.status, text, read.why) };
    }
    if (read.kind === "retry") return this.transient(res, read);
    // A redirect is not followed (a POST must not quietly become a GET): the route names the server.
    const moved = res.location ? `redirected to ${res.location}; set the route's base_url to it. ` : "";
    const body = redact(moved + text, secrets).slice(0, 2000);
    return { outcome: { kind: "refused", status: res.status, body, attempts: this.attempt } };
  }

  /** A refusal that stops the route (a billing problem): the provider's words and what to do. */
  private routeStopped(status: number, text: string, why: string): CallOutcome {
    return {
      kind: "refused",
      status,
      body: redact(text, this.secrets).slice(0, 2000),
      attempts: this.attempt,
      stopsRoute: redact(why, this.secrets).slice(0, 1000),
    };
  }

  /** A transient error: another try after the server's wait, unless that wait passes the deadline. */
  private transient(res: HttpReply, read: Extract<ErrorReading, { kind: "retry" }>): Tried {
    this.lastError = `HTTP ${res.status}`;
    const { advice } = read;
    const waitMs = advice.waitMs;
    const beyond = waitMs !== null && waitMs > this.remaining();
    // A wait past the deadline fails this request at once (the next build sends it): it says nothing of
    // the pace the route can keep.
    if (read.rateLimited) this.endTry(beyond ? "failed" : advice);
    if (beyond) {
      // Waiting would pass the deadline: a failure now, which the next build sends again.
      this.lastError += ` asking to wait ${Math.round(waitMs / 1000)} s, beyond the request's deadline`;
      return { stop: true };
    }
    if (!read.rateLimited) return { waitMs, limited: false };
    // A rate limit paces the whole route (the pacer), and spends none of this request's tries.
    this.spent--;
    return { waitMs, limited: true };
  }

  /** The wait before the next try (none after a rate limit: the pacer holds it), or why there is none. */
  private async beforeNextTry(
    waitMs: number | null,
    limited: boolean,
  ): Promise<"next" | "stop" | "cancelled"> {
    if (this.spent === this.route.retry.max_attempts) return "stop";
    if (limited) {
      this.hooks.onRetry?.(redact(this.lastError, this.secrets));
      return "next"; // the pacer holds the next try until the route may send again
    }
    const delay = Math.max(waitMs ?? 0, backoffMs(this.route.retry, this.spent));
    if (delay >= this.remaining()) return "stop";
    this.hooks.onRetry?.(redact(this.lastError, this.secrets));
    if (!(await sleep(delay, this.hooks.signal))) return "cancelled";
    return (await this.hooks.beforeRetry?.()) ? "cancelled" : "next";
  }
}

/** A reply past the route's size limit: what happened and the field that allows more. */
function tooLargeError(route: Route): string {
  const bytes = Math.floor(route.max_reply_mb * 2 ** 20);
  return (
    `reply body larger than the route's max_reply_mb (${route.max_reply_mb} MiB, ${bytes} bytes); ` +
    `not read further; raise max_reply_mb in route ${route.name} if such replies are expected`
  );
}

/** Waits, unless the signal fires first (then false). */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
