// model: each request sent once through its route; replies kept per request (crash-safe), so a rebuild
// or a changed scorer never calls the model again. Built-in baselines (route `medbench`) come from the task.
import { type StageContext, type StageKind } from "../src/runner/stage.js";
import { StageError } from "../src/errors.js";
import { sortKeys, sortedJson, stableJson, type Json } from "../src/util/json.js";
import { bodyJson, fixedPart } from "../src/model/body-json.js";
import { sha256Hex } from "../src/hash/sha256.js";
import { createHash } from "../src/util/builtins.js";
import { loadRoutes, splitModel, type Route } from "../src/model/registry.js";
import type { CallOutcome } from "../src/model/client.js";
import { readReply } from "../src/model/reply.js";
import { auditReplies } from "../src/model/reply-audit.js";
import { secretValues } from "../src/model/redact.js";
import { routeQueryValues } from "../src/model/url-secrets.js";
import { RouteBreaker } from "../src/model/breaker.js";
import type { Refusal } from "../src/model/refusal.js";
import { thinkingAudit } from "../src/model/thinking-audit.js";
import {
  FIXED_FIELD_FIX,
  fixedFieldMessage,
  fixedFieldProblems,
  thinkingOff,
  thinkingOffRefusal,
  tokenField,
} from "../src/model/model-rules.js";
import { ownsKey } from "../src/remote/shard.js";
import type { MemoReply } from "../src/model/reply-memo.js";
import type { TaskRequest } from "../tasks/task.js";
import { writeRecordsFile, type ReplyFormat, type ReplyRecord } from "../src/contract/records.js";
import { inputRecords } from "./records-io.js";
import { modelRuleProblems } from "./model-rules-check.js";
import { releaseFiles } from "./release.js";
import { builtinBaseline, builtinParts } from "./baseline.js";
import type { ParamDecls } from "../src/contract/declarations.js";
import { checkValue } from "../src/contract/params.js";
import type { CheckEnv, StageProblem, StageShape } from "../src/runner/stage.js";
import type { TaskModule } from "../tasks/task.js";

export type { ReplyRecord } from "../src/contract/records.js";

type Format = ReplyFormat;
const FORMATS: Format[] = ["json_schema", "json_object", "none"];

export interface Params {
  model: string;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  thinking?: "off" | "on";
  overrides?: Record<string, { assistant_prefill?: string; fields?: Record<string, Json> }>;
  /** A built-in baseline's parameters and seed (route `medbench`). */
  baseline?: Record<string, Json>;
  seed?: number;
}

function deepMerge(a: Record<string, Json>, b: Record<string, Json>): Record<string, Json> {
  if (isEmpty(b)) return a; // most routes add nothing: no copy of every body (issue 29)
  const out: Record<string, Json> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isObj(prev) && isObj(v) ? deepMerge(prev, v) : v;
  }
  return out;
}
const isObj = (v: unknown): v is Record<string, Json> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

// A task's schema is one object shared by all its requests (records keep it once): its sorted, frozen copy
// is made once, and its JSON with it, not by the serialisation of every body (issue 29). Same JSON, so the
// same bytes and keys.
const sortedSchemas = new WeakMap<object, Json>();
function sortedSchema(schema: Json): Json {
  if (schema === null || typeof schema !== "object") return schema;
  let sorted = sortedSchemas.get(schema);
  if (sorted === undefined) sortedSchemas.set(schema, (sorted = fixedPart(sortKeys(schema) as Json)));
  return sorted;
}

/**
 * The exact body sent: the task's request, the spec's fields, the route's fields, then per-model overrides.
 */
export function requestBody(
  req: TaskRequest,
  p: Params,
  route: Route,
  model: string,
  format: Format,
): Record<string, Json> {
  let body: Record<string, Json> = { model, messages: req.messages as unknown as Json };
  // The spec's max_tokens goes out under the name the model takes (route.request.token_field, models).
  const tokens = tokenField(route, model);
  // Explicit 0 and false are values, not absences: test with !== undefined, never truthiness.
  if (p.max_tokens !== undefined) body[tokens] = p.max_tokens;
  if (p.temperature !== undefined) body.temperature = p.temperature;
  if (p.top_p !== undefined) body.top_p = p.top_p;
  // A request's own generation fields (its request configuration) override the stage's.
  for (const [k, v] of Object.entries(req.generation ?? {}))
    if (v !== undefined) body[k === "max_tokens" ? tokens : k] = v;
  body = deepMerge(body, route.request.extra ?? {});
  // A per-model override's fields replace the route's thinking-off fields
  // (they were validated for that model).
  const o = p.overrides?.[`${route.name}/${model}`] ?? p.overrides?.[model];
  if (p.thinking === "off" && !o?.fields) body = deepMerge(body, thinkingOffFields(route, model));
  if (format === "json_schema" && req.schema) {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: req.schema.name, strict: true, schema: sortedSchema(req.schema.schema) },
    };
    body = deepMerge(body, route.request.schema_mode ?? {});
  } else if (format === "json_object") {
    body.response_format = { type: "json_object" };
  }
  if (o?.fields) body = deepMerge(body, o.fields);
  if (o?.assistant_prefill !== undefined)
    body.messages = [...(body.messages as Json[]), { role: "assistant", content: o.assistant_prefill }];
  const unsendable = fixedFieldProblems(route, model, body)[0];
  if (unsendable) {
    const where = req.configuration ? ` (request configuration ${req.configuration})` : "";
    throw new StageError(fixedFieldMessage(route, model, unsendable) + where, FIXED_FIELD_FIX);
  }
  return body;
}

/** The fields a thinking-off request sends to this model, or the stage's refusal. */
function thinkingOffFields(route: Route, model: string): Record<string, Json> {
  const off = thinkingOff(route, model);
  if (off.kind === "fields" || off.kind === "lowest") return off.fields;
  if (off.kind === "refused") {
    const { message, fix } = thinkingOffRefusal(route.name, model, off);
    throw new StageError(message, fix);
  }
  const lowest = off.lowest ? ` (or the lowest reasoning effort for ${model})` : "";
  throw new StageError(
    `route ${route.name} does not declare how to switch thinking off${lowest}, ` +
      "and this task runs with thinking off",
    `add request.${off.lowest ? "reasoning_low" : "thinking_off"} to route ${route.name} ` +
      "(e.g. chat_template_kwargs: {enable_thinking: false}) in its registry file",
  );
}

/** The per-request key: route identity (base URL), model and the exact body, as sorted-key JSON. */
export function requestKey(route: Route, body: Json): string {
  return serialisedRequest(route, body).key;
}

/**
 * The body as sent (sorted-key JSON, serialised and encoded once) and its key, hashed from the same bytes:
 * the key is sha256 of sortedJson({ base_url, body, model }), which is these bytes with the route and model
 * around them.
 */
export function serialisedRequest(route: Route, body: Json): { payload: Buffer; key: string } {
  const payload = Buffer.from(bodyJson(body)!, "utf8");
  const model = (body as { model?: unknown }).model;
  if (typeof model !== "string" || typeof route.base_url !== "string")
    return { payload, key: sha256Hex(sortedJson({ base_url: route.base_url, model, body })!) };
  const key = createHash("sha256")
    .update(`{"base_url":${JSON.stringify(route.base_url)},"body":`)
    .update(payload)
    .update(`,"model":${JSON.stringify(model)}}`)
    .digest("hex");
  return { payload, key };
}

const NO_REPLY = { finish_reason: null, reasoning: false, think: false } as const;
/** The record of a request the server refused for good: no text, and an error that says why. */
function refusedReply(id: string, key: string, format: Format, refusal: Refusal): ReplyRecord {
  const { kind, status, message } = refusal;
  const error = `refused by the server (${kind}): HTTP ${status}: ${message}`;
  return { id, request_sha256: key, format, text: "", error, ...NO_REPLY, request_refused: refusal };
}

/** The error of a request another machine sends (--shard): not a failure, and never in results. */
export const OTHER_SHARD = "not sent here: another shard's request (--shard)";

function replyOf(id: string, key: string | null, format: Format, body: Json): ReplyRecord {
  const read = readReply(body);
  return {
    id,
    request_sha256: key,
    format,
    text: read.text,
    error: null,
    finish_reason: read.finish_reason,
    reasoning: read.reasoning,
    // A think tag, opening or closing (a chat template may open the block in the prompt: a bare </think>).
    think: /<\/?think\b/i.test(read.text),
    // Kept only when the server sent them, so replies of servers without them stay as they were.
    ...(read.reasoning_content !== null ? { reasoning_content: read.reasoning_content } : {}),
    ...((body as { usage?: Json }).usage !== undefined ? { usage: (body as { usage?: Json }).usage! } : {}),
    ...(read.refusal !== null ? { refusal: read.refusal } : {}),
    ...(read.tool_calls > 0 ? { tool_calls: read.tool_calls } : {}),
    ...(read.served_model !== null ? { served_model: read.served_model } : {}),
  };
}

async function runRoute(
  ctx: StageContext,
  p: Params,
  route: Route,
  model: string,
  requests: TaskRequest[],
): Promise<{
  replies: ReplyRecord[];
  sample: Record<string, Json> | null;
  sent: Record<string, Json> | null;
  formatRefusal: string | null;
  retries: number;
}> {
  // Loaded when requests are answered, not when the stage is keyed: a no-op build needs no HTTP client.
  const { chatCompletion } = await import("../src/model/client.js");
  const { memoReply, recall } = await import("../src/model/reply-memo.js");
  const { classifyRefusal, isFinal } = await import("../src/model/refusal.js");
  const { memoRefusal, recallRefusal } = await import("../src/model/refusal-memo.js");
  const { SentRequests } = await import("../src/model/sent-requests.js");
  const apiKey = route.api_key_env ? ctx.options.env[route.api_key_env] : undefined;
  if (route.api_key_env && !apiKey)
    throw new StageError(
      `route ${route.name} needs an API key in $${route.api_key_env}, which is not set`,
      `export ${route.api_key_env}=… (the key is never written to any file)`,
    );
  const routes = [...loadRoutes(ctx.options.registryFiles).values()];
  const secrets = secretValues(routes, ctx.options.env, routeQueryValues(routes));
  const breaker = new RouteBreaker(route.max_failures_in_a_row, route.concurrency);
  const replies: ReplyRecord[] = new Array(requests.length);
  const inflight = new Map<string, Promise<CallOutcome>>();
  const answered = new Set<string>(); // keys whose reply this run stored
  const sent = new SentRequests(); // each item's body as sent (its last try), for metrics.request
  // The format level later items start at; items that needed a lower one; the first refusal of a format.
  const run = { start: 0, needed: 0, formatRefusal: null as string | null };
  let done = 0,
    errors = 0,
    retries = 0;
  let lastReport = 0;
  let sample: Record<string, Json> | null = null;
  const sendingFrom = performance.now();
  const report = (force = false) => {
    if (force || Date.now() - lastReport > 1000) {
      lastReport = Date.now();
      const ms = performance.now() - sendingFrom;
      ctx.emit({ type: "progress", stage: ctx.stage, done, total: requests.length, retries, errors, ms });
    }
  };
  const shard = ctx.options.shard;
  const one = async (i: number) => {
    const req = requests[i]!;
    // A request's shard follows its first format's key, which no earlier reply of this run can change.
    const owned =
      !shard ||
      ownsKey(shard, requestKey(route, requestBody(req, p, route, model, req.schema ? FORMATS[0]! : "none")));
    const first = req.schema ? run.start : FORMATS.indexOf("none");
    let level = first;
    let body: Record<string, Json>;
    for (;;) {
      const format = FORMATS[level]!;
      body = requestBody(req, p, route, model, format);
      sample ??= body;
      const { payload, key } = serialisedRequest(route, body);
      const ns = ctx.options.replyNamespace ?? "requests";
      if (!owned) {
        // Another shard's: not looked up either, since a shard's output is never the result (a plain build
        // assembles it), and each lookup would be a remote read of a reply another machine may be writing.
        replies[i] = { id: req.id, request_sha256: key, format, text: "", error: OTHER_SHARD, ...NO_REPLY };
        break;
      }
      const entry = ctx.options.refresh ? null : await ctx.memo.get(ns, key);
      let memo: MemoReply | null = recall(entry);
      // A refusal of this very request that an earlier build received is final: taken, not sent again.
      const kept = memo ? null : recallRefusal(entry);
      // An identical body's reply may have been stored while this one's memo was read (a remote read takes
      // long): take it from the memo, which has it here now, rather than send the body a second time.
      if (!memo && !kept && answered.has(key)) memo = recall(await ctx.memo.get(ns, key));
      if (!memo) {
        // Identical bodies in one run (the same utterance in two subsets) share one call.
        let call = kept ? Promise.resolve<CallOutcome>(kept) : inflight.get(key);
        if (!call) {
          call = chatCompletion(route, body, apiKey, {
            onRetry: () => void retries++,
            secrets,
            signal: breaker.signal,
            payload,
          });
          void call.then((o) => breaker.record(o));
          inflight.set(key, call);
        }
        const outcome: CallOutcome = await call;
        if (outcome.kind === "cancelled") return; // not sent: no reply and no error; the next build sends it
        // A lower format only when the server refused the format itself (not the item's length, a
        // parameter, the key or the model: each would be refused again, and the format claimed would lie).
        // A route that cannot work (out of quota) is not read as a refusal of the item or its format.
        const refusal =
          outcome.kind === "refused" && !outcome.stopsRoute
            ? classifyRefusal(outcome.status, outcome.body)
            : null;
        if (refusal?.kind === "format" && req.schema && level < FORMATS.length - 1) {
          run.formatRefusal ??= `HTTP ${refusal.status}: ${refusal.message}`;
          level++;
          continue;
        }
        if (refusal && isFinal(refusal) && outcome.kind === "refused") {
          // The item itself is refused: its final outcome, kept so that later builds do not send it again.
          if (!kept) ctx.memo.put(ns, key, JSON.stringify(memoRefusal(outcome)));
          replies[i] = refusedReply(req.id, key, format, refusal);
          break;
        }
        if (outcome.kind !== "reply") {
          // An error is never an answer: not in the memo, so the next build sends this request again.
          const error =
            outcome.kind === "failed"
              ? outcome.error
              : `HTTP ${outcome.status}: ${outcome.body.slice(0, 200)}`;
          replies[i] = { id: req.id, request_sha256: key, format, text: "", error, ...NO_REPLY };
          errors++;
          break;
        }
        memo = memoReply(outcome);
        ctx.memo.put(ns, key, JSON.stringify(memo)); // stored the moment it arrives
        if (!ctx.options.refresh) answered.add(key);
        // A later identical body finds it in the memo now: the call's reply need not be held for it
        // (unless --refresh, which reads no memo: then the call is shared for the whole run).
        if (!ctx.options.refresh) inflight.delete(key);
      }
      replies[i] = replyOf(req.id, key, format, memo.body);
      break;
    }
    if (level > first && ++run.needed >= 2) run.start = Math.max(run.start, level);
    if (owned) sent.add(body, req.configuration, FORMATS[level]!);
    done++;
    report();
  };
  let next = 0;
  const workers = Array.from(
    { length: Math.max(1, Math.min(route.concurrency, requests.length)) },
    async () => {
      while (next < requests.length && !breaker.tripped) await one(next++);
    },
  );
  await Promise.all(workers);
  report(true);
  if (breaker.tripped)
    throw new StageError(
      `route ${route.name} (${route.base_url}): ${breaker.why()}; ` +
        `stopped after ${done} of ${requests.length} ` +
        "requests (the replies received are kept; requests not sent are not errors)",
      `check that the server answers (and the key, if it refused it), then build again: it sends only the ` +
        `requests without a reply; a slow server may need a larger timeout_s, retry.max_total_s or ` +
        `max_failures_in_a_row in the route`,
    );
  return { replies, sample, sent: sent.record(), formatRefusal: run.formatRefusal, retries };
}

/**
 * Calls one model (a route's or a built-in baseline) on every request; shared by the model and judge stages.
 */
export async function callModel(
  ctx: StageContext,
  p: Params,
  requests: TaskRequest[],
): Promise<{ replies: ReplyRecord[]; audit: Record<string, Json> }> {
  const { route: routeName, model } = splitModel(p.model);
  let replies: ReplyRecord[];
  let request: Record<string, Json>;
  let retries = 0;
  if (routeName === "medbench") {
    const baseline = builtinBaseline(ctx.task, p.model);
    const texts = baseline.reply({
      release: releaseFiles(ctx.inputs.release),
      requests,
      params: p.baseline ?? {},
      seed: p.seed ?? 0,
      fitted: ctx.inputs.fit ? (JSON.parse(ctx.inputs.fit.text("fit")) as { model: Json }).model : undefined,
    });
    replies = requests.map((r, i) => ({
      id: r.id,
      request_sha256: null,
      format: "builtin",
      text: texts[i]!,
      error: null,
      finish_reason: "stop",
      reasoning: false,
      think: false,
    }));
    request = {
      model: p.model,
      builtin: true,
      ...(p.baseline !== undefined ? { params: p.baseline } : {}),
      ...(p.seed !== undefined ? { seed: p.seed } : {}),
      ...(ctx.inputs.fit ? { fit_sha256: ctx.inputs.fit.hashes.fit ?? null } : {}),
    };
  } else {
    const route = loadRoutes(ctx.options.registryFiles).get(routeName);
    if (!route)
      throw new StageError(
        `no route ${routeName} in the registry`,
        "add it to a --registry file (see registry/providers.yaml), or use a built-in medbench/ model",
      );
    // Every body is built before any is sent: a field the model cannot take refuses the stage first.
    for (const req of requests) requestBody(req, p, route, model, req.schema ? FORMATS[0]! : "none");
    const out = await runRoute(ctx, p, route, model, requests);
    replies = out.replies;
    retries = out.retries;
    const { messages, ...fields } = out.sample ?? {};
    const roles = ((messages as { role: string }[] | undefined) ?? []).map((m) => m.role).join(", ");
    request = {
      // The fields of the bodies sent (the first body's when none was: a shard's, a stopped route's).
      ...(out.sent ?? fields),
      messages: `per item: ${(messages as Json[] | undefined)?.length ?? 0} messages (${roles})`,
    };
    warnLowerFormats(ctx, p.model, requests, replies, out.formatRefusal);
  }
  const formats: Record<string, number> = {};
  for (const r of replies) formats[r.format] = (formats[r.format] ?? 0) + 1;
  const otherShards = replies.filter((r) => r.error === OTHER_SHARD).length;
  const refused = refusalCounts(replies);
  const apiErrors = replies.filter((r) => r.error !== null).length - otherShards - (refused?.n ?? 0);
  if (refused) warnRefused(ctx, p.model, replies, refused);
  if (retries) ctx.emit({ type: "info", stage: ctx.stage, message: `${p.model}: ${retries} retries` });
  if (apiErrors) {
    // The first error in the provider's words (redacted by the client), not only a count.
    const first = replies.find((r) => r.error !== null && r.error !== OTHER_SHARD)!.error!;
    ctx.emit({
      type: "warning",
      stage: ctx.stage,
      message:
        `${p.model}: ${apiErrors} of ${replies.length} requests failed ` +
        "(API errors; no verdict for those items); " +
        `the next build sends them again; the first: ${first.slice(0, 300)}`,
    });
    ctx.incomplete?.(`${apiErrors} of ${replies.length} requests failed`);
  }
  // Refusals, filtered replies, tool calls and substitute models: counted and said, never hidden.
  const replyAudit = routeName === "medbench" ? null : auditReplies(replies, p.model, model);
  for (const message of replyAudit?.warnings ?? []) ctx.emit({ type: "warning", stage: ctx.stage, message });
  if (otherShards) {
    const s = ctx.options.shard!;
    ctx.emit({
      type: "info",
      stage: ctx.stage,
      message:
        `${p.model}: shard ${s.index}/${s.count}: ${otherShards} of ${replies.length} requests ` +
        "left to the other shards",
    });
    ctx.incomplete?.(`${otherShards} of ${replies.length} requests are other shards' (--shard)`);
  }
  return {
    replies,
    audit: {
      model: p.model,
      route: routeName,
      request,
      response_format: formats,
      thinking_audit: thinkingAudit(replies),
      api_errors: apiErrors,
      // Requests the server refused for good (final: not errors, not sent again, no verdict).
      ...(refused ? { refused } : {}),
      ...(otherShards ? { other_shards: otherShards } : {}),
      truncated: replies.filter((r) => r.finish_reason === "length").length,
      ...(replyAudit ? { reply_audit: replyAudit.counts } : {}),
      n: replies.length,
      // Requests of several configurations: the counts of each, so the headline is judged on its own.
      ...(requests.some((r) => r.configuration)
        ? { by_configuration: countsByConfiguration(requests, replies) }
        : {}),
      // Any failed request leaves the run incomplete: it is sent again by the next build
      // (docs/model-requests.md).
      incomplete: apiErrors + otherShards > 0,
    },
  };
}

/** A warning when items with a schema went with a lower response format than json_schema: how many, with
 *  which format, and the server's first refusal of the schema. */
function warnLowerFormats(
  ctx: StageContext,
  model: string,
  requests: TaskRequest[],
  replies: ReplyRecord[],
  refusal: string | null,
): void {
  const lower: Record<string, number> = {};
  replies.forEach((r, i) => {
    if (r && requests[i]!.schema && r.format !== FORMATS[0] && r.error !== OTHER_SHARD)
      lower[r.format] = (lower[r.format] ?? 0) + 1;
  });
  const n = Object.values(lower).reduce((a, b) => a + b, 0);
  if (n === 0) return;
  const counts = Object.entries(lower).map(([format, k]) => `${format} ${k}`);
  ctx.emit({
    type: "warning",
    stage: ctx.stage,
    message:
      `${model}: ${n} of ${replies.length} items were sent with a lower response format than ` +
      `${FORMATS[0]} (${counts.join(", ")}; metrics.response_format counts each)` +
      (refusal ? `: the server refused the schema (${refusal})` : ""),
  });
}

/** The requests refused for good, in all and by kind of refusal; null when none was. */
function refusalCounts(replies: ReplyRecord[]): { n: number; by_kind: Record<string, number> } | null {
  const byKind: Record<string, number> = {};
  let n = 0;
  for (const r of replies)
    if (r?.request_refused) {
      n++;
      byKind[r.request_refused.kind] = (byKind[r.request_refused.kind] ?? 0) + 1;
    }
  return n ? { n, by_kind: byKind } : null;
}

/** How many requests the server refused for good, why, and the first one's message (already redacted). */
function warnRefused(
  ctx: StageContext,
  model: string,
  replies: ReplyRecord[],
  refused: { n: number; by_kind: Record<string, number> },
): void {
  const first = replies.find((r) => r?.request_refused)!.request_refused!;
  const kinds = Object.entries(refused.by_kind).map(([kind, n]) => `${kind.replace(/_/g, " ")} ${n}`);
  ctx.emit({
    type: "warning",
    stage: ctx.stage,
    message:
      `${model}: the server refused ${refused.n} of ${replies.length} requests (${kinds.join(", ")}): ` +
      "final, no verdict for those items, not sent again (--refresh model sends every request again); " +
      `the first: HTTP ${first.status}: ${first.message.slice(0, 300)}`,
  });
}

/** API errors, truncated replies and requests of each request configuration (replies in request order). */
function countsByConfiguration(requests: TaskRequest[], replies: ReplyRecord[]): Record<string, Json> {
  const out: Record<string, { api_errors: number; truncated: number; n: number }> = {};
  requests.forEach((req, i) => {
    const c = (out[req.configuration ?? ""] ??= { api_errors: 0, truncated: 0, n: 0 });
    const r = replies[i];
    c.n++;
    if (r && r.error !== null && r.error !== OTHER_SHARD && !r.request_refused) c.api_errors++;
    if (r?.finish_reason === "length") c.truncated++;
  });
  return out;
}

/**
 * The route's fields shape every body sent, so they are part of the key
 * (the key's variable name, never its value).
 */
export function routeIdentity(ctx: StageContext, model: string): Json {
  const { route: name } = splitModel(model);
  if (name === "medbench") return null;
  const route = loadRoutes(ctx.options.registryFiles).get(name);
  if (!route) return null;
  return {
    base_url: route.base_url,
    api_key_env: route.api_key_env ?? null,
    header_names: Object.keys(route.headers ?? {}).sort(),
    request: route.request as Json,
  };
}

/** Generation fields as the model and judge stages take them (and request configurations set them). */
export const GENERATION_PARAMS = {
  max_tokens: { type: "integer", minimum: 1 },
  temperature: { type: "number", minimum: 0, maximum: 2 },
  top_p: { type: "number", exclusiveMinimum: 0, maximum: 1 },
} as const satisfies ParamDecls;

/** ROUTE/MODEL, as the model and judge stages' parameters take it. */
export const MODEL_PATTERN = "^[^/\\s]+/\\S+$";

const MODEL_PARAMS: ParamDecls = {
  model: { type: "string", pattern: MODEL_PATTERN, description: "ROUTE/MODEL" },
  ...GENERATION_PARAMS,
  thinking: { type: "string", enum: ["off", "on"] },
  overrides: {
    type: "object",
    additionalProperties: {
      type: "object",
      properties: { assistant_prefill: { type: "string" }, fields: { type: "object" } },
    },
    description: "per ROUTE/MODEL or MODEL: assistant_prefill and extra body fields",
  },
  baseline: { type: "object", description: "a built-in baseline's parameters (route medbench)" },
  seed: { type: "integer", minimum: 0, description: "a built-in baseline's seed" },
};

/** A model stage's model, checked with the spec: a built-in baseline of the task (with its own parameters,
 *  and its fit stage when it learns), or a route of the registries. */
function checkModel(stage: StageShape, task: TaskModule, env: CheckEnv | null): StageProblem[] {
  const p = stage.params as { model?: Json; baseline?: Json };
  if (typeof p.model !== "string") return [];
  if (!p.model.startsWith("medbench/"))
    return env ? [...routeProblems([p.model], "/params/model", env), ...modelRuleProblems(p, env)] : [];
  if (env?.registryFiles.length) loadRoutes(env.registryFiles); // a --registry given is checked, used or not
  const b = task.baselines[p.model];
  if (!b)
    return [
      {
        pointer: "/params/model",
        message: `no built-in model ${p.model} for this task`,
        fix: `use one of: ${Object.keys(task.baselines).join(", ")}, or ROUTE/MODEL of a registry route`,
      },
    ];
  const out: StageProblem[] = [];
  if (p.baseline !== undefined)
    for (const x of checkValue(
      p.baseline,
      { type: "object", properties: b.params ?? {} },
      "/params/baseline",
    ))
      out.push(x);
  if (b.fit && !("fit" in stage.inputs))
    out.push({
      pointer: "/inputs",
      message: `${p.model} learns from the release: the model stage needs its fitted model`,
      fix: "add a stage of kind fit (params: model, seed) and the input fit: { stage: <that stage> }",
    });
  return out;
}

/** Models (ROUTE/MODEL) whose route no registry has: each a problem at `pointer`, with the routes there are.
 *  The registries themselves are read here,
 *  so a mistake in a --registry file is found before anything runs. */
export function routeProblems(models: string[], pointer: string, env: CheckEnv): StageProblem[] {
  const routes = loadRoutes(env.registryFiles);
  const files = ["registry/providers.yaml", ...env.registryFiles].join(", ");
  return models
    .filter((m) => new RegExp(MODEL_PATTERN).test(m)) // a malformed one is its parameter's problem
    .map((m) => splitModel(m).route)
    .filter((route) => route !== "medbench" && !routes.has(route))
    .map((route) => ({
      pointer,
      message: `no route ${route} in the registry (${files})`,
      fix:
        `use one of its routes (${[...routes.keys()].join(", ")}), add ${route} to a --registry file, ` +
        "or a built-in medbench/ model",
    }));
}

export const modelStage: StageKind = {
  kind: "model",
  inBundle: "model",
  inputs: {
    requests: { outputs: { requests: "requests" } },
    release: { release: true, optional: true, description: "the release a built-in baseline reads" },
    fit: { outputs: { fit: "fit" }, optional: true, description: "a learning baseline's fitted model" },
  },
  check: checkModel,
  outputs: { replies: "replies", audit: "audit" },
  params: MODEL_PARAMS,
  required: ["model"],
  // Task code only for a built-in model (route medbench), and then that baseline's alone.
  taskParts: (params) => builtinParts(params),
  async identify(ctx) {
    return routeIdentity(ctx, String((ctx.params as { model?: unknown }).model));
  },
  async run(ctx) {
    const p = ctx.params as unknown as Params;
    if (typeof p.model !== "string")
      throw new StageError(
        "the model stage needs params.model",
        "set it in the spec, e.g. model: {$var: model}",
      );
    const requests = [...(await inputRecords(ctx, "requests", "requests"))];
    const { replies, audit } = await callModel(ctx, p, requests);
    return { replies: writeRecordsFile("replies", replies, ctx.tempPath()), audit: stableJson(audit) };
  },
};
