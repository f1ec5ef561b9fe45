// model: each request sent once through its route; replies kept per request (crash-safe), so a rebuild
// or a changed scorer never calls the model again. Built-in baselines (route `medbench`) come from the task.
// The wire is the route's protocol (src/model/protocols.ts), loaded by name and keyed with the route's
// identity; sending, memo, retries: ./model-route.ts.
import { type StageContext, type StageKind } from "../src/contract/stage.js";
import { StageError } from "../src/errors.js";
import { stableJson, type Json } from "../src/util/json.js";
import { splitModel } from "../src/model/registry.js";
import { routeKeyFields } from "../src/model/routes.js";
import type { Route } from "../src/model/registry.js";
import { addTokens, dollars, NO_TOKENS, priceOf, type Price, type Tokens } from "../src/model/price.js";
import { estimateOf, type Budget, type SendEstimate } from "../src/model/budget.js";
import { pendingRequests } from "./model-pending.js";
import { protocolModule, protocolName, protocolOf } from "../src/model/protocols.js";
import { codeIdentity, isInfrastructure } from "../src/runner/code/code.js";
import { installRoot } from "../src/util/paths.js";
import { itemFieldsOf, itemSummary, withoutItemFields, type Protocol } from "../src/model/protocol.js";
import { DEVIABLE_FIELDS, DeviationLog, type Deviation, type RuledParams } from "../src/model/deviations.js";
import { auditReplies } from "../src/model/reply-audit.js";
import { thinkingAudit } from "../src/model/thinking-audit.js";
import type { TaskRequest } from "../tasks/task.js";
import { writeRecordsFile, type ReplyRecord } from "../src/contract/records.js";
import { inputRecords } from "./records-io.js";
import { modelRuleProblems } from "./model-rules-check.js";
import { releaseFiles } from "./release.js";
import { builtinBaseline, builtinParts } from "./baseline.js";
import { apiKeyOf, runRoute } from "./model-route.js";
import { FirstBodies } from "./model-bodies.js";
import { noBatchApi, runBatches } from "./model-batch.js";
import { BATCH_PROTOCOLS } from "../src/model/batch-api.js";
import {
  countsByConfiguration,
  noteOtherShards,
  tally,
  warnFailed,
  warnLowerFormats,
  warnRefused,
  allRefusedForParameter,
  type ReplyTally,
} from "./model-audit.js";
import type { ParamDecls } from "../src/contract/declarations.js";
import { checkValue } from "../src/contract/params.js";
import type { CheckEnv, StageProblem, StageShape } from "../src/contract/stage.js";
import type { TaskModule } from "../tasks/task.js";

export type { ReplyRecord } from "../src/contract/records.js";
export { OTHER_SHARD, requestBody } from "./model-route.js";

export interface Params extends RuledParams {
  model: string;
  /** A built-in baseline's parameters and seed (route `medbench`). */
  baseline?: Record<string, Json>;
  seed?: number;
}

/** A model's replies and what metrics.request records of the requests. */
interface Called {
  replies: ReplyRecord[];
  request: Record<string, Json>;
  retries: number;
  /** Requests in provider batches still running (build --batch without --wait), in words. */
  pending?: string;
  /** A route's replies' token totals (metrics.json `tokens`), and the answers that reported none. */
  tokens?: { totals: Tokens; without: number };
  /** How the requests differ from the spec's by the model's rules (src/model/deviations.ts). */
  deviations?: Deviation[];
}

/** The token totals of a route's answers, each request once (items of one body share one reply), read
 *  through the route's protocol. */
function tokenTotals(protocol: Protocol, replies: ReplyRecord[]): { totals: Tokens; without: number } {
  const seen = new Set<string>();
  let totals = NO_TOKENS;
  let without = 0;
  for (const reply of replies) {
    if (reply.error !== null || reply.request_sha256 === null || seen.has(reply.request_sha256)) continue;
    seen.add(reply.request_sha256);
    const tokens = protocol.tokens(reply.usage ?? undefined);
    if (tokens) totals = addTokens(totals, tokens);
    else without++;
  }
  return { totals, without };
}

/** Each request's body made before anything is sent (a field the model cannot take refuses the stage), and
 *  how the route's rules make the requests differ from the spec (src/model/deviations.ts). */
function deviationsOf(bodies: FirstBodies): Deviation[] {
  const log = new DeviationLog();
  bodies.requests.forEach((req, i) => log.add(bodies.deviations(i), req.configuration));
  return log.list();
}

/** A built-in baseline's replies: the task's own code, run here (no route, no request sent). */
function builtinCall(ctx: StageContext, params: Params, requests: TaskRequest[]): Called {
  const baseline = builtinBaseline(ctx.task, params.model);
  const texts = baseline.reply({
    release: releaseFiles(ctx.inputs.release),
    requests,
    params: params.baseline ?? {},
    seed: params.seed ?? 0,
    fitted: ctx.inputs.fit ? (JSON.parse(ctx.inputs.fit.text("fit")) as { model: Json }).model : undefined,
  });
  const replies: ReplyRecord[] = requests.map((req, i) => ({
    id: req.id,
    request_sha256: null,
    format: "builtin",
    text: texts[i]!,
    error: null,
    finish_reason: "stop",
    reasoning: false,
    think: false,
  }));
  const request: Record<string, Json> = {
    model: params.model,
    builtin: true,
    ...(params.baseline !== undefined ? { params: params.baseline } : {}),
    ...(params.seed !== undefined ? { seed: params.seed } : {}),
    ...(ctx.inputs.fit ? { fit_sha256: ctx.inputs.fit.hashes.fit ?? null } : {}),
  };
  return { replies, request, retries: 0, deviations: [] };
}

/** A route's model on every request: each body is built before any is sent, then sent through the route. */
async function routeCall(
  ctx: StageContext,
  params: Params,
  routeName: string,
  model: string,
  requests: TaskRequest[],
): Promise<Called> {
  const route = ctx.options.routes.get(routeName);
  if (!route)
    throw new StageError(
      `no route ${routeName} in the registry`,
      "add it to a --registry file (see registry/providers.yaml), or use a built-in medbench/ model",
    );
  const protocol = await protocolOf(route);
  const bodies = new FirstBodies({ protocol, params, route, model }, requests);
  // A field the model cannot take refuses the stage before anything is sent; one its rules send otherwise
  // is a deviation of the run, recorded.
  const deviations = deviationsOf(bodies);
  const budget = ctx.options.budget;
  const price = priceOf(route, model);
  const batching = batchMode(ctx, route, protocol);
  if (budget) await refuseOverBudget(ctx, { bodies, batching }, budget, price);
  const spend = budget ? { budget, price: price! } : undefined;
  const batched = batching ? await runBatches(ctx, bodies, apiKeyOf(ctx, route), spend) : null;
  const out = await runRoute(ctx, { bodies, spend, notSent: batched?.unanswered });
  const sample = out.sample ?? {};
  const itemFields = itemFieldsOf(protocol);
  const request = {
    // The fields of the bodies sent (the first body's when none was: a shard's, a stopped route's), and what
    // the item's own fields held (never their text: a task's items may be private).
    ...(out.sent ?? withoutItemFields(sample, itemFields)),
    ...itemSummary(sample, itemFields),
  };
  warnLowerFormats(ctx, params.model, requests, out.replies, out.formatRefusal);
  const tokens = tokenTotals(protocol, out.replies);
  const submitted = batched?.submitted;
  const pending = submitted
    ? `${submitted.requests} requests in ${submitted.batches} batches submitted; rerun to collect`
    : undefined;
  return { replies: out.replies, request, retries: out.retries, tokens, pending, deviations };
}

/** Whether the stage's requests go as provider batches: build --batch, or the route's `batch: true`. */
function batchMode(ctx: StageContext, route: Route, protocol: Protocol): boolean {
  if (!ctx.options.batch?.on && !route.batch) return false;
  if (!BATCH_PROTOCOLS.includes(protocol.name)) throw noBatchApi(route);
  return true;
}

/** What a stage sends to one route's model. */
interface StageRequests {
  bodies: FirstBodies;
  /** Sent as provider batches (their discount applies). */
  batching: boolean;
}

/** --max-cost: a stage whose requests without a reply would cost more than the build has left is refused
 *  before it sends anything (and one whose cost cannot be bounded: no price, no max tokens). */
async function refuseOverBudget(
  ctx: StageContext,
  { bodies, batching }: StageRequests,
  budget: Budget,
  price: Price | null,
): Promise<void> {
  const { route, model } = bodies.maker;
  const name = `${route.name}/${model}`;
  if (!price)
    throw new StageError(
      `--max-cost: the registry has no price for ${name}, so what the build spends cannot be counted`,
      `add price: { "${model}": { input: USD, output: USD } } (per million tokens) to route ${route.name} ` +
        "in a --registry file, or build without --max-cost",
    );
  const pending = await pendingRequests(ctx, bodies);
  if (pending.length === 0) return;
  const estimate = estimateOf(pending, bodies.maker.protocol.outputBound, price, batching);
  const said = estimateWords(estimate);
  if (estimate.output_tokens === null)
    throw new StageError(
      `--max-cost: ${name} would be sent ${said}, with no max_tokens, so its cost has no bound`,
      "set max_tokens in the spec (the stage's params) or build without --max-cost",
    );
  if (estimate.cost_usd! > budget.left)
    throw new StageError(
      `--max-cost: refused to send ${said} to ${name}: estimated ${dollars(estimate.cost_usd!)}, ` +
        `more than is left of ${budget.describe()}; nothing was sent`,
      "raise --max-cost, or send fewer requests (--limit N, --subset)",
    );
  ctx.emit({
    type: "info",
    stage: ctx.stage,
    message: `${name}: ${said}, estimated ${dollars(estimate.cost_usd!)}`,
  });
}

/** What a model would be sent of these requests (those without a reply), estimated (at the batch price
 *  for a route with `batch: true`); null for a built-in model or a route the registry does not have. */
export async function estimateModel(
  ctx: StageContext,
  params: Params,
  requests: TaskRequest[],
): Promise<SendEstimate | null> {
  const { route: routeName, model } = splitModel(params.model);
  const route = ctx.options.routes.get(routeName);
  if (routeName === "medbench" || !route) return null;
  const protocol = await protocolOf(route);
  const pending = await pendingRequests(ctx, new FirstBodies({ protocol, params, route, model }, requests));
  // A route that sends as batches by default is estimated at its batch price.
  return estimateOf(pending, protocol.outputBound, priceOf(route, model), route.batch === true);
}

/** An estimate in words: requests, input tokens (bytes / 4) and the output bound. */
export function estimateWords(estimate: SendEstimate): string {
  const output = estimate.output_tokens === null ? "no bound on" : `at most ${estimate.output_tokens}`;
  return (
    `${estimate.requests} requests, about ${estimate.input_tokens} input tokens (bytes / 4) and ` +
    `${output} output tokens`
  );
}

/**
 * Calls one model (a route's or a built-in baseline) on every request; shared by the model and judge stages.
 */
export async function callModel(
  ctx: StageContext,
  params: Params,
  requests: TaskRequest[],
): Promise<{ replies: ReplyRecord[]; audit: Record<string, Json> }> {
  const { route: routeName, model } = splitModel(params.model);
  const builtin = routeName === "medbench";
  const called = builtin
    ? builtinCall(ctx, params, requests)
    : await routeCall(ctx, params, routeName, model, requests);
  const { replies } = called;
  const counts = tally(replies);
  if (counts.refused) warnRefused(ctx, params.model, replies, counts.refused);
  if (called.retries)
    ctx.emit({ type: "info", stage: ctx.stage, message: `${params.model}: ${called.retries} retries` });
  if (counts.apiErrors) warnFailed(ctx, params.model, replies, counts.apiErrors);
  // Refusals, filtered replies, tool calls and substitute models: counted and said, never hidden.
  const replyAudit = builtin ? null : auditReplies(replies, params.model, model);
  for (const message of replyAudit?.warnings ?? []) ctx.emit({ type: "warning", stage: ctx.stage, message });
  if (counts.otherShards) noteOtherShards(ctx, params.model, replies.length, counts.otherShards);
  if (called.pending) ctx.incomplete?.(called.pending); // said in place of the failed requests' count
  const replyCounts = replyAudit?.counts ?? null;
  const audit = auditOf({ model: params.model, route: routeName, called, counts, requests, replyCounts });
  return { replies, audit };
}

/** What one model's call on the stage's requests came to: the model and route named, what the call gave,
 *  its replies counted, the requests, and the reply audit's counts (null for a built-in model). */
interface CallTotals {
  model: string;
  route: string;
  called: Called;
  counts: ReplyTally;
  requests: TaskRequest[];
  replyCounts: Json;
}

/** The stage's audit: what was asked, and what came back, counted. */
function auditOf(totals: CallTotals): Record<string, Json> {
  const { model, route, requests, replyCounts: replyAudit } = totals;
  const { replies, request, tokens, deviations } = totals.called;
  const { formats, refused, otherShards, apiErrors } = totals.counts;
  return {
    model,
    route,
    request,
    // Only when there are any, so that the audit of every other run stays as it was.
    ...(deviations?.length ? { deviations: deviations as unknown as Json } : {}),
    response_format: formats,
    thinking_audit: thinkingAudit(replies),
    api_errors: apiErrors,
    // Requests the server refused for good (final: not errors, not sent again, no verdict).
    ...(refused ? { refused } : {}),
    ...(otherShards ? { other_shards: otherShards } : {}),
    truncated: replies.filter((reply) => reply.finish_reason === "length").length,
    // What the answers cost in tokens (a built-in model has none); cost is worked out where it is shown.
    ...(tokens ? { tokens: tokens.totals as unknown as Json } : {}),
    ...(tokens?.without ? { replies_without_usage: tokens.without } : {}),
    ...(replyAudit !== null ? { reply_audit: replyAudit } : {}),
    n: replies.length,
    // Requests of several configurations: the counts of each, so the headline is judged on its own.
    ...(requests.some((req) => req.configuration)
      ? { by_configuration: countsByConfiguration(requests, replies) }
      : {}),
    // Any failed request leaves the run incomplete: it is sent again by the next build
    // (docs/model-requests.md).
    // So does a run whose every request was refused for a parameter (no item has a verdict).
    incomplete: apiErrors + otherShards > 0 || allRefusedForParameter(refused, replies.length),
  };
}

/**
 * The route's fields shape every body sent, so they are part of the key (the key's variable name, never its
 * value); and so does the code of the protocol it speaks, loaded by name at run time (no other protocol's).
 */
export function routeIdentity(ctx: StageContext, model: string): Json {
  const { route: name } = splitModel(model);
  if (name === "medbench") return null;
  const route = ctx.options.routes.get(name);
  if (!route) return null;
  const { files, packages } = codeIdentity(installRoot(), [protocolModule(route)], isInfrastructure);
  return {
    ...(routeKeyFields(route) as object),
    protocol: { name: protocolName(route), code: files, packages },
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
  no_deviation: {
    type: "array",
    items: { type: "string", enum: DEVIABLE_FIELDS },
    description: "fields the route's model rules may not send otherwise (deviate): such a model is refused",
  },
  baseline: { type: "object", description: "a built-in baseline's parameters (route medbench)" },
  seed: { type: "integer", minimum: 0, description: "a built-in baseline's seed" },
};

/** A model stage's model, checked with the spec: a built-in baseline of the task (with its own parameters,
 *  and its fit stage when it learns), or a route of the registries. */
function checkModel(stage: StageShape, task: TaskModule, env: CheckEnv | null): StageProblem[] {
  const params = stage.params as { model?: Json; baseline?: Json };
  if (typeof params.model !== "string") return [];
  if (!params.model.startsWith("medbench/"))
    return env
      ? [...routeProblems([params.model], "/params/model", env), ...modelRuleProblems(params, env)]
      : [];
  if (env?.routes.given.length) env.routes.check(); // a --registry given is checked, used or not
  const baseline = task.baselines[params.model];
  if (!baseline)
    return [
      {
        pointer: "/params/model",
        message: `no built-in model ${params.model} for this task`,
        fix: `use one of: ${Object.keys(task.baselines).join(", ")}, or ROUTE/MODEL of a registry route`,
      },
    ];
  const out: StageProblem[] = [];
  if (params.baseline !== undefined)
    out.push(
      ...checkValue(
        params.baseline,
        { type: "object", properties: baseline.params ?? {} },
        "/params/baseline",
      ),
    );
  if (baseline.fit && !("fit" in stage.inputs))
    out.push({
      pointer: "/inputs",
      message: `${params.model} learns from the release: the model stage needs its fitted model`,
      fix: "add a stage of kind fit (params: model, seed) and the input fit: { stage: <that stage> }",
    });
  return out;
}

/** Models (ROUTE/MODEL) whose route no registry has: each a problem at `pointer`, with the routes there are.
 *  The registries themselves are read here,
 *  so a mistake in a --registry file is found before anything runs. */
export function routeProblems(models: string[], pointer: string, env: CheckEnv): StageProblem[] {
  const routes = env.routes;
  routes.check(); // the registries are read here, whether a model names a route or not
  const files = routes.files.join(", ");
  return models
    .filter((model) => new RegExp(MODEL_PATTERN).test(model)) // a malformed one is its parameter's problem
    .map((model) => splitModel(model).route)
    .filter((route) => route !== "medbench" && !routes.has(route))
    .map((route) => ({
      pointer,
      message: `no route ${route} in the registry (${files})`,
      fix:
        `use one of its routes (${routes.names().join(", ")}), add ${route} to a --registry file, ` +
        "or a built-in medbench/ model",
    }));
}

export const modelStage: StageKind = {
  kind: "model",
  inBundle: "model",
  // node:http, which the first request sent loads. A built-in is loaded at V8's own flags
  // (src/load/held-flags.ts), and a young collection in that load can let a small run's young generation
  // grow past its held 4 MB a semi-space: at the stage's start, its requests just read, it did in 3 of 5
  // first builds of 2,070 items (8 MB more; docs/performance.md, "Peak memory of a first build"). Loaded
  // while the stage before runs in a process of its own, the load is off the wall time and the heap quiet.
  ahead() {
    require("node:http");
  },
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
  async estimate(ctx) {
    const params = ctx.params as unknown as Params;
    const requests = [...(await inputRecords(ctx, "requests", "requests"))];
    const estimate = await estimateModel(ctx, params, requests);
    return estimate ? { [params.model]: estimate } : {};
  },
  async run(ctx) {
    const params = ctx.params as unknown as Params;
    if (typeof params.model !== "string")
      throw new StageError(
        "the model stage needs params.model",
        "set it in the spec, e.g. model: {$var: model}",
      );
    const requests = [...(await inputRecords(ctx, "requests", "requests"))];
    const { replies, audit } = await callModel(ctx, params, requests);
    return { replies: writeRecordsFile("replies", replies, ctx.tempPath()), audit: stableJson(audit) };
  },
};
