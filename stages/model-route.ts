// A model stage's requests sent through one route: each item's body in the best response format the server
// takes, its reply from the memo when an earlier build stored one, else sent once (identical bodies share
// a call) and stored the moment it arrives (crash-safe). The wire is the route's protocol's
// (src/model/protocol.ts), loaded by the caller; the transport (src/model/client.ts) is loaded only when
// something is sent.
import type { StageContext } from "../src/contract/stage.js";
import { StageError } from "../src/errors.js";
import type { Json } from "../src/util/json.js";
import type { Route } from "../src/model/registry.js";
import type { CallOutcome } from "../src/model/client.js";
import { secretValues } from "../src/model/redact.js";
import { routeQueryValues } from "../src/model/url-secrets.js";
import { RouteBreaker } from "../src/model/breaker.js";
import type { Refusal } from "../src/model/refusal.js";
import type { MemoReply } from "../src/model/reply-memo.js";
import type { SentRequests } from "../src/model/sent-requests.js";
import { itemFieldsOf, type Protocol, type Transport, type WireFormat } from "../src/model/protocol.js";
import { firstFormat, madeBody, type BodyMaker, type FirstBodies, type Prepared } from "./model-bodies.js";
import { ownsKey } from "../src/remote/shard.js";
import type { Budget } from "../src/model/budget.js";
import { costOf, type Price } from "../src/model/price.js";
import type { TaskRequest } from "../tasks/task.js";
import type { ReplyRecord } from "../src/contract/records.js";

/** The error of a request another machine sends (--shard): not a failure, and never in results. */
export const OTHER_SHARD = "not sent here: another shard's request (--shard)";

const NO_REPLY = { finish_reason: null, reasoning: false, think: false } as const;

/**
 * The exact body sent: the task's request, the spec's fields as the model's rules send them (deviations),
 * the route's fields, then per-model overrides. A body the route cannot send refuses the stage.
 */
export function requestBody(maker: BodyMaker, req: TaskRequest, format: WireFormat): Record<string, Json> {
  return madeBody(maker, req, format).body;
}

/** The record of a request without a reply: no text, and an error that says why. */
function errorReply(id: string, key: string, format: WireFormat, error: string): ReplyRecord {
  return { id, request_sha256: key, format, text: "", error, ...NO_REPLY };
}

/** The record of a request the server refused for good: no text, and an error that says why. */
function refusedReply(id: string, key: string, format: WireFormat, refusal: Refusal): ReplyRecord {
  const { kind, status, message } = refusal;
  const error = `refused by the server (${kind}): HTTP ${status}: ${message}`;
  return { ...errorReply(id, key, format, error), request_refused: refusal };
}

/** What a route's run of the stage's requests gave. */
export interface RouteOutcome {
  replies: ReplyRecord[];
  /** The first body made, for metrics.request when none was sent. */
  sample: Record<string, Json> | null;
  /** The fields of the bodies sent (src/model/sent-requests.ts). */
  sent: Record<string, Json> | null;
  /** The server's first refusal of a response format. */
  formatRefusal: string | null;
  retries: number;
}

/** Modules needed only when requests are answered, not when the stage is keyed: a no-op build loads none. */
async function sendingModules() {
  // The HTTP client (node:http, zlib) loads at the first request sent: a rebuild from cached replies
  // sends none, and loading it cost about 10 ms of the rebuild's CPU.
  let client: Promise<typeof import("../src/model/client.js")> | null = null;
  const transport: Transport = {
    send: async (...args) => (await (client ??= import("../src/model/client.js"))).send(...args),
  };
  const { memoReply, recall } = await import("../src/model/reply-memo.js");
  const { isFinal } = await import("../src/model/refusal.js");
  const { memoRefusal, recallRefusal } = await import("../src/model/refusal-memo.js");
  const { SentRequests } = await import("../src/model/sent-requests.js");
  const { pacerFor, paceNote, estimatedTokens } = await import("../src/model/pacer.js");
  return {
    transport,
    memoReply,
    recall,
    isFinal,
    memoRefusal,
    recallRefusal,
    SentRequests,
    pacerFor,
    paceNote,
    estimatedTokens,
  };
}
type Modules = Awaited<ReturnType<typeof sendingModules>>;

/** The route's API key from the environment, or the stage's refusal when it is not set. */
export function apiKeyOf(ctx: StageContext, route: Route): string | undefined {
  const apiKey = route.api_key_env ? ctx.options.env[route.api_key_env] : undefined;
  if (route.api_key_env && !apiKey)
    throw new StageError(
      `route ${route.name} needs an API key in $${route.api_key_env}, which is not set`,
      `export ${route.api_key_env}=… (the key is never written to any file)`,
    );
  return apiKey;
}

/** --max-cost: the build's budget and the price each reply is charged at. */
export interface Spend {
  budget: Budget;
  price: Price;
}

/** What a route's run sends: the stage's requests with their first bodies, the build's budget (--max-cost),
 *  and the requests this build does not send online (a batch has them, or failed them), with why. */
export interface RouteWork {
  bodies: FirstBodies;
  spend?: Spend;
  notSent?: ReadonlyMap<string, string>;
}

/** Sends the requests of `work.bodies` (each first body as made there) through their route. */
export async function runRoute(ctx: StageContext, work: RouteWork): Promise<RouteOutcome> {
  const modules = await sendingModules();
  const run = new RouteRun(ctx, work, modules, apiKeyOf(ctx, work.bodies.maker.route));
  await run.sendAll();
  return run.outcome();
}

/** One item's try in one response format: its index and request, its body made, and whether a lower
 *  format is left to try. */
interface Attempt {
  i: number;
  req: TaskRequest;
  prepared: Prepared;
  canLower: boolean;
}

class RouteRun {
  private readonly replies: ReplyRecord[];
  private readonly inflight = new Map<string, Promise<CallOutcome>>();
  private readonly answered = new Set<string>(); // keys whose reply this run stored
  private readonly elsewhere = new Set<string>(); // keys whose reply another machine stored meanwhile
  private readonly sent: SentRequests; // each item's body as sent (its last try), for metrics.request
  // The format level later items start at; items that needed a lower one; the first refusal of a format.
  private readonly formats = { start: 0, needed: 0, refusal: null as string | null };
  private readonly breaker: RouteBreaker;
  private readonly secrets: string[];
  private readonly formatList: readonly WireFormat[];
  private readonly transport: Transport;
  private readonly namespace: string;
  private sample: Record<string, Json> | null = null;
  private done = 0;
  private errors = 0;
  private retries = 0;
  private lastReport = 0;
  private sending = false;
  private readonly sendingFrom: number;
  private readonly route: Route;
  private readonly protocol: Protocol;
  private readonly requests: readonly TaskRequest[];
  private readonly bodies: FirstBodies;
  private readonly spend?: Spend;
  private readonly notSent?: ReadonlyMap<string, string>;

  constructor(
    private readonly ctx: StageContext,
    work: RouteWork,
    private readonly modules: Modules,
    private readonly apiKey: string | undefined,
  ) {
    this.bodies = work.bodies;
    this.spend = work.spend;
    this.notSent = work.notSent;
    const { route, protocol } = work.bodies.maker;
    [this.route, this.protocol] = [route, protocol];
    this.requests = work.bodies.requests;
    const routes = ctx.options.routes.list();
    this.secrets = secretValues(routes, ctx.options.env, routeQueryValues(routes));
    this.breaker = new RouteBreaker(route.max_failures_in_a_row, route.concurrency, protocol.refusal);
    this.replies = new Array(work.bodies.requests.length);
    this.sent = new modules.SentRequests(itemFieldsOf(protocol));
    this.formatList = protocol.formats;
    this.transport = modules.transport;
    this.namespace = ctx.options.replyNamespace ?? "requests";
    this.sendingFrom = performance.now();
  }

  outcome(): RouteOutcome {
    const { replies, sample, retries } = this;
    return { replies, sample, sent: this.sent.record(), formatRefusal: this.formats.refusal, retries };
  }

  /** Sends every request, `concurrency` at a time, until all are answered or the route's breaker trips. */
  async sendAll(): Promise<void> {
    const { requests, breaker, route } = this;
    if (route.tokens_per_minute) this.checkTokenRate(route.tokens_per_minute);
    const pacer = this.modules.pacerFor(route, this.ctx.options.paceDir);
    const before = pacer.report();
    let next = 0;
    const workers = Array.from(
      { length: Math.max(1, Math.min(this.route.concurrency, requests.length)) },
      async () => {
        while (next < requests.length && !breaker.tripped) await this.sendItem(next++);
      },
    );
    await Promise.all(workers);
    this.report(true);
    const note = this.modules.paceNote(route, before, pacer.report(), performance.now() - this.sendingFrom);
    if (note) this.ctx.emit({ type: "info", stage: this.ctx.stage, message: note });
    if (breaker.tripped) throw this.stopped();
  }

  /** A request estimated above the route's tokens_per_minute could never go: refused before any is sent. */
  private checkTokenRate(perMinute: number): void {
    let largest = 0;
    for (let i = 0; i < this.requests.length; i++) {
      if (!this.owns(i)) continue;
      const { body, payload } = this.bodies.prepared(i);
      largest = Math.max(largest, this.modules.estimatedTokens(payload, this.protocol.outputBound(body)));
    }
    if (largest <= perMinute) return;
    const name = this.route.name;
    throw new StageError(
      `route ${name}: tokens_per_minute is ${perMinute}, but a request is estimated at ${largest} tokens ` +
        "(its body's bytes / 4 plus its max_tokens): it could never be sent",
      `raise tokens_per_minute in route ${name} to the provider's limit (at least ${largest}), or lower ` +
        "the spec's max_tokens",
    );
  }

  private stopped(): StageError {
    const { route } = this;
    if (this.spend?.budget.reached)
      return new StageError(
        `route ${route.name}: the build's spending reached ${this.spend.budget.describe()}; stopped after ` +
          `${this.done} of ${this.requests.length} requests (the replies received are kept)`,
        "raise --max-cost, or build again with a new limit: only the requests without a reply are sent",
      );
    // Every server of the route, as records show them (query values hidden): all of them failed.
    const servers = [route.base_url, ...(route.replicas ?? [])].join(", ");
    return new StageError(
      `route ${route.name} (${servers}): ${this.breaker.why()}; ` +
        `stopped after ${this.done} of ${this.requests.length} ` +
        "requests (the replies received are kept; requests not sent are not errors)",
      `check that the server answers (and the key, if it refused it), then build again: it sends only the ` +
        `requests without a reply; a slow server may need a larger timeout_s, retry.max_total_s or ` +
        `max_failures_in_a_row in the route`,
    );
  }

  private report(force = false, sending?: true): void {
    if (!force && Date.now() - this.lastReport <= 1000) return;
    this.lastReport = Date.now();
    const ms = performance.now() - this.sendingFrom;
    const { done, retries, errors } = this;
    const total = this.requests.length;
    const event = { type: "progress", stage: this.ctx.stage, done, total, retries, errors, ms } as const;
    this.ctx.emit(sending ? { ...event, sending } : event);
  }

  private prepare(req: TaskRequest, format: WireFormat): Prepared {
    const body = requestBody(this.bodies.maker, req, format);
    return { body, format, ...this.protocol.serialise(this.route, body) };
  }

  /** A request's shard follows its first format's key, which no earlier reply of this run can change. */
  private owns(i: number): boolean {
    const shard = this.ctx.options.shard;
    return !shard || ownsKey(shard, this.bodies.prepared(i).key);
  }

  /** One item: its reply in the first format the server takes (from the memo, or sent). */
  private async sendItem(i: number): Promise<void> {
    const req = this.requests[i]!;
    const owned = this.owns(i);
    const formats = this.formatList;
    const first = req.schema ? this.formats.start : formats.indexOf("none");
    // Its first format's body was made before anything was sent (FirstBodies): sent as made then.
    const made = formats.indexOf(firstFormat(this.protocol, req));
    if (first > made) this.bodies.forget(i); // earlier items needed a lower format: it starts there
    let level = first;
    let prepared: Prepared;
    for (;;) {
      prepared = level === made ? this.bodies.take(i) : this.prepare(req, formats[level]!);
      this.sample ??= prepared.body;
      if (!owned) {
        // Another shard's: not looked up either, since a shard's output is never the result (a plain build
        // assembles it), and each lookup would be a remote read of a reply another machine may be writing.
        this.replies[i] = errorReply(req.id, prepared.key, prepared.format, OTHER_SHARD);
        break;
      }
      const step = await this.answer({ i, req, prepared, canLower: level < formats.length - 1 });
      if (step === "cancelled") return; // not sent: no reply and no error; the next build sends it
      if (step === "done") break;
      level++;
    }
    if (level > first && ++this.formats.needed >= 2)
      this.formats.start = Math.max(this.formats.start, level);
    if (owned) this.sent.add(prepared.body, req.configuration, formats[level]!);
    this.done++;
    this.report();
  }

  /** Whether a stored body is an answer, as the route's protocol reads a 2xx. */
  private readonly answers = (body: Json): boolean =>
    "body" in this.protocol.success(JSON.stringify(body), "application/json");

  /** The item's reply for this body: the memo's, or the server's; "lower" when the server refused the
   *  format itself and a lower one is left. */
  private async answer(attempt: Attempt): Promise<"done" | "lower" | "cancelled"> {
    const { i, req, prepared } = attempt;
    const { recall, recallRefusal } = this.modules;
    const { key, format } = prepared;
    const entry = this.ctx.options.refresh ? null : await this.ctx.memo.get(this.namespace, key);
    let memo: MemoReply | null = recall(entry, this.answers);
    // A refusal of this very request that an earlier build received is final: taken, not sent again.
    const kept = memo ? null : recallRefusal(entry);
    // An identical body's reply may have been stored while this one's memo was read (a remote read takes
    // long): take it from the memo, which has it here now, rather than send the body a second time.
    if (!memo && !kept && this.answered.has(key))
      memo = recall(await this.ctx.memo.get(this.namespace, key), this.answers);
    const batched = memo || kept ? undefined : this.notSent?.get(key);
    if (batched !== undefined) {
      this.replies[i] = errorReply(req.id, key, format, batched);
      this.errors++;
      return "done";
    }
    if (!memo) {
      const outcome: CallOutcome = await (kept ? Promise.resolve<CallOutcome>(kept) : this.call(prepared));
      // A claimed request whose tries failed or stopped: another machine may have answered it meanwhile.
      memo =
        outcome.kind === "reply"
          ? this.remember(key, outcome)
          : outcome.kind === "refused"
            ? null
            : await this.storedElsewhere(key);
      if (!memo) {
        if (outcome.kind === "cancelled" || outcome.kind === "reply") return "cancelled";
        return this.unanswered(attempt, outcome, kept !== null);
      }
    }
    this.replies[i] = this.replyOf(req.id, key, format, memo.body);
    return "done";
  }

  private replyOf(id: string, key: string, format: WireFormat, body: Json): ReplyRecord {
    // The record's fields in the order every reply file has them.
    const { text, ...fields } = this.protocol.reply(body);
    return { id, request_sha256: key, format, text, error: null, ...fields };
  }

  /** The reply of a request this run claimed that another machine stored while its tries went on (its
   *  claim passed its deadline: this process was stopped, or its server slow), or null. */
  private async storedElsewhere(key: string): Promise<MemoReply | null> {
    const { memo } = this.ctx;
    if (!this.elsewhere.has(key) && (await memo.recheck?.(this.namespace, key)) == null) return null;
    this.elsewhere.add(key);
    return this.modules.recall(await memo.get(this.namespace, key), this.answers);
  }

  /** Identical bodies in one run (the same utterance in two subsets) share one call. */
  private call({ key, body, payload }: Prepared): Promise<CallOutcome> {
    let call = this.inflight.get(key);
    if (!call) {
      if (!this.sending) {
        this.sending = true;
        this.report(true, true); // the first request goes out: a progress event marked `sending`
      }
      call = this.transport.send(this.bodies.maker, body, this.apiKey, {
        onRetry: () => void this.retries++,
        secrets: this.secrets,
        signal: this.breaker.signal,
        payload,
        // Not sent again blindly: a claim past its deadline may have been answered by another machine.
        beforeRetry: async () => (await this.storedElsewhere(key)) !== null,
        ...(this.ctx.options.paceDir ? { paceDir: this.ctx.options.paceDir } : {}),
      });
      void call.then((outcome) => this.breaker.record(outcome));
      this.inflight.set(key, call);
    }
    return call;
  }

  /** A reply is stored the moment it arrives; a later identical body finds it in the memo. */
  private remember(key: string, outcome: Extract<CallOutcome, { kind: "reply" }>): MemoReply {
    const memo = this.modules.memoReply(outcome);
    this.ctx.memo.put(this.namespace, key, JSON.stringify(memo));
    this.charge(outcome.body);
    // The call's reply need not be held for a later identical body (unless --refresh, which reads no memo:
    // then the call is shared for the whole run).
    if (!this.ctx.options.refresh) {
      this.answered.add(key);
      this.inflight.delete(key);
    }
    return memo;
  }

  /** --max-cost: what the reply cost (its usage at the route's price); the route stops once the build's
   *  spending reaches the limit (the replies received are kept). */
  private charge(body: Json): void {
    const { spend } = this;
    if (!spend) return;
    const tokens = this.protocol.tokens(this.protocol.reply(body).usage ?? undefined);
    if (tokens && spend.budget.charge(costOf(tokens, spend.price)))
      this.breaker.stop(`the build's spending reached ${spend.budget.describe()}`);
  }

  /** A request without a reply: a refusal of its format (try a lower one), of the item for good (kept, not
   *  sent again), or an error, which is never an answer: the next build sends it again. */
  private unanswered(
    { i, req, prepared, canLower }: Attempt,
    outcome: Exclude<CallOutcome, { kind: "reply" | "cancelled" }>,
    kept: boolean,
  ): "done" | "lower" {
    const { key, format } = prepared;
    // A lower format only when the server refused the format itself (not the item's length, a
    // parameter, the key or the model: each would be refused again, and the format claimed would lie).
    // A route that cannot work (out of quota) is not read as a refusal of the item or its format.
    const refusal =
      outcome.kind === "refused" && !outcome.stopsRoute
        ? this.protocol.refusal(outcome.status, outcome.body)
        : null;
    if (refusal?.kind === "format" && req.schema && canLower) {
      this.formats.refusal ??= `HTTP ${refusal.status}: ${refusal.message}`;
      return "lower";
    }
    if (refusal && this.modules.isFinal(refusal) && outcome.kind === "refused") {
      if (!kept) this.ctx.memo.put(this.namespace, key, JSON.stringify(this.modules.memoRefusal(outcome)));
      this.replies[i] = refusedReply(req.id, key, format, refusal);
      return "done";
    }
    const error =
      outcome.kind === "failed" ? outcome.error : `HTTP ${outcome.status}: ${outcome.body.slice(0, 200)}`;
    this.replies[i] = errorReply(req.id, key, format, error);
    this.errors++;
    return "done";
  }
}
