// build --batch: a model stage's requests without a reply sent as provider batches (the route's protocol's
// batch API, src/model/batch-api.ts: OpenAI's Batch API, Anthropic's Message Batches, Gemini's Batch API)
// instead of one by one. The batches made for a set of requests are recorded in
// the reply memo (namespace `batches`, under the set's key; the shared remote holds it too), so a later
// build on any machine collects them instead of submitting again. Each reply is stored exactly as an online
// reply is (same memo entry, same key): the results are those of an online build with the same replies.
import type { StageContext } from "../src/contract/stage.js";
import type { Route } from "../src/model/registry.js";
import { sha256Hex } from "../src/hash/sha256.js";
import { secretValues, redactJson } from "../src/model/redact.js";
import { routeQueryValues } from "../src/model/url-secrets.js";
import { randomBytes } from "../src/util/builtins.js";
import { batchApiOf, type BatchApi, type BatchState, type PendingBatch } from "../src/model/batch-api.js";
import type { Protocol } from "../src/model/protocol.js";
import type { Json } from "../src/util/json.js";
import { costOf } from "../src/model/price.js";
import { StageError } from "../src/errors.js";
import type { Spend } from "./model-route.js";
import { pendingRequests, type Pending } from "./model-pending.js";
import type { FirstBodies } from "./model-bodies.js";

/** The batches made for one set of requests: the route and model, each batch's id and its requests' keys
 *  (`cache batches` lists them: src/cli/batches-view.ts). */
export interface BatchRecord {
  route: string;
  base_url: string;
  model: string;
  batches: { id: string; keys: string[] }[];
  /** A batch being made: recorded before the create call, cleared once its id is (recover()). */
  pending?: PendingBatch | null;
}

/** What the batches left: requests without a reply and why (not sent online by this build), and, while
 *  batches are still running, what was submitted. */
export interface BatchOutcome {
  unanswered: Map<string, string>;
  submitted: { requests: number; batches: number } | null;
}

export const NAMESPACE = "batches";

export async function runBatches(
  ctx: StageContext,
  bodies: FirstBodies,
  apiKey: string | undefined,
  spend?: Spend,
): Promise<BatchOutcome> {
  const { route, protocol, model } = bodies.maker;
  const pending = await pendingRequests(ctx, bodies);
  if (pending.length === 0) return { unanswered: new Map(), submitted: null };
  const routes = ctx.options.routes.list();
  const secrets = secretValues(routes, ctx.options.env, routeQueryValues(routes));
  const client = await batchApiOf(protocol, { route, model }, apiKey, secrets);
  if (!client) throw noBatchApi(route);
  const setKey = sha256Hex(JSON.stringify([route.base_url, model, pending.map((x) => x.key).sort()]));
  const record = (await recorded(ctx, setKey)) ?? {
    route: route.name,
    base_url: route.base_url,
    model,
    batches: [],
  };
  const states = await providerSaid(route, async () => {
    if (record.pending) await recover(ctx, client, setKey, record);
    // Requests no recorded batch holds (none were made, or a build was killed between two batches).
    const held = new Set(record.batches.flatMap((batch) => batch.keys));
    const missing = pending.filter((x) => !held.has(x.key));
    if (missing.length) await submitAll(ctx, client, setKey, missing, record);
    return poll(ctx, client, record, ctx.options.batch?.wait === true);
  });
  const unanswered = new Map<string, string>();
  if (states.some((state) => !state.done)) {
    for (const batch of record.batches)
      for (const key of batch.keys) unanswered.set(key, `in batch ${batch.id}: rerun to collect`);
    return { unanswered, submitted: { requests: pending.length, batches: record.batches.length } };
  }
  for (const [i, batch] of record.batches.entries())
    await providerSaid(route, () =>
      collect(ctx, { client, protocol }, { batch, state: states[i]! }, { secrets, unanswered, spend }),
    );
  // Collected: the record lets them go, so a build that still lacks their failed requests submits them anew.
  ctx.memo.put(NAMESPACE, setKey, JSON.stringify({ ...record, batches: [] }));
  return { unanswered, submitted: null };
}

/** The record written here and in the shared remote before the build goes on. */
async function save(ctx: StageContext, setKey: string, record: BatchRecord): Promise<void> {
  ctx.memo.put(NAMESPACE, setKey, JSON.stringify(record));
  await ctx.memo.settled?.();
}

/** A batch asked for by a build stopped before it recorded the batch's id: found among the provider's
 *  batches and recorded, or (none found) let go of, its requests then submitted again. */
async function recover(ctx: StageContext, client: BatchApi, setKey: string, record: BatchRecord) {
  const asked = record.pending!;
  const id = await client.find(asked, new Set(record.batches.map((batch) => batch.id)));
  if (id) record.batches.push({ id, keys: asked.keys });
  record.pending = null;
  await save(ctx, setKey, record);
  const message = id
    ? `batch ${id} found at the provider: a build stopped before it recorded it`
    : `no batch found for ${asked.keys.length} requests a stopped build was submitting: submitted again`;
  ctx.emit({ type: "info", stage: ctx.stage, message });
}

async function recorded(ctx: StageContext, setKey: string): Promise<BatchRecord | null> {
  const entry = await ctx.memo.get(NAMESPACE, setKey);
  if (!entry) return null;
  try {
    return JSON.parse(entry.toString("utf8")) as BatchRecord;
  } catch {
    return null;
  }
}

/** Submits the requests in batches within the provider's limits, each added to the record as it is made. */
async function submitAll(
  ctx: StageContext,
  client: BatchApi,
  setKey: string,
  pending: Pending[],
  record: BatchRecord,
): Promise<void> {
  const lines = pending.map((x) => ({ key: x.key, line: client.entry(x.key, x.payload) }));
  for (const chunk of splitBatches(lines, client.limits)) {
    const keys = chunk.map((x) => x.key);
    // Recorded before the create call, here and in the shared remote: a build killed while the provider
    // answers leaves what a later build finds the batch by (recover), rather than submit it twice.
    record.pending = {
      tag: `medbench-${randomBytes(16).toString("hex")}`,
      at: new Date().toISOString(),
      keys,
    };
    await save(ctx, setKey, record);
    const id = await client.submit(
      chunk.map((x) => x.line),
      record.pending.tag,
    );
    // Recorded as each batch is made: a build killed now leaves batches a later build (here or
    // elsewhere) collects rather than submits again.
    record.batches.push({ id, keys });
    record.pending = null;
    await save(ctx, setKey, record);
  }
  const ids = record.batches.map((batch) => batch.id).join(", ");
  ctx.emit({
    type: "info",
    stage: ctx.stage,
    message: `${pending.length} requests submitted in batches ${ids}`,
  });
}

/** The batches' states: read once, or (`wait`) until every one is done, with a growing pause between
 *  reads (0.5 s doubling to 60 s) and a line of their states each time. */
async function poll(
  ctx: StageContext,
  client: BatchApi,
  record: BatchRecord,
  wait: boolean,
): Promise<BatchState[]> {
  for (let pause = 500; ; pause = Math.min(pause * 2, 60_000)) {
    const states = await Promise.all(record.batches.map((batch) => client.state(batch.id)));
    const counts = new Map<string, number>();
    for (const state of states) counts.set(state.status, (counts.get(state.status) ?? 0) + 1);
    const words = [...counts].map(([status, count]) => `${count} ${status}`).join(", ");
    ctx.emit({ type: "info", stage: ctx.stage, message: `batches: ${words}` });
    if (!wait || states.every((state) => state.done)) return states;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** A finished batch's replies stored as online replies are; each request it did not answer, and why. */
async function collect(
  ctx: StageContext,
  { client, protocol }: { client: BatchApi; protocol: Protocol },
  { batch, state }: { batch: { id: string; keys: string[] }; state: BatchState },
  {
    secrets,
    unanswered,
    spend,
  }: { secrets: readonly string[]; unanswered: Map<string, string>; spend?: Spend },
): Promise<void> {
  const namespace = ctx.options.replyNamespace ?? "requests";
  const answered = new Set<string>();
  for (const line of await client.results(state)) {
    if (!batch.keys.includes(line.custom_id)) continue;
    // The protocol's own reading of a 2xx body (an error inside it is no answer), as an online reply's.
    const read =
      line.body === null ? { problem: line.error! } : protocol.success(JSON.stringify(line.body), null);
    if ("problem" in read) {
      unanswered.set(line.custom_id, `batch ${batch.id}: ${read.problem}`);
      continue;
    }
    const body = redactJson(read.body, secrets);
    ctx.memo.put(namespace, line.custom_id, JSON.stringify({ kind: "reply", status: 200, body }));
    charge(protocol, spend, body);
    answered.add(line.custom_id);
  }
  const why = state.error ? ` (${state.error})` : "";
  for (const key of batch.keys)
    if (!answered.has(key) && !unanswered.has(key))
      unanswered.set(key, `batch ${batch.id} ${state.status}${why} without an answer for it`);
}

/** --max-cost: what a batch reply cost, at the route's price less its batch discount. */
function charge(protocol: Protocol, spend: Spend | undefined, body: Json): void {
  if (!spend) return;
  const tokens = protocol.tokens(protocol.reply(body).usage ?? undefined);
  if (tokens) spend.budget.charge(costOf(tokens, spend.price, true));
}

/** A route whose protocol medbench knows no batch API of. */
export function noBatchApi(route: Route): StageError {
  return new StageError(
    `route ${route.name}: medbench has no batch API for its protocol (${route.protocol ?? "openai"})`,
    "build without --batch (and without batch: true in the route)",
  );
}

/** Requests split into batches within a provider's limits: at most `requests` entries, `bytes` bytes
 *  each. */
export function splitBatches<T extends { line: Buffer }>(
  items: readonly T[],
  limits: { requests: number; bytes: number },
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length && (current.length >= limits.requests || bytes + item.line.length > limits.bytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.line.length;
  }
  if (current.length) out.push(current);
  return out;
}

/** A batch API's refusal or an unreachable server, as the stage's error (redacted by BatchHttp). */
async function providerSaid<T>(route: Route, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof StageError) throw e;
    throw new StageError(
      `route ${route.name} (${route.base_url}): its batch API failed: ${(e as Error).message}`,
      "check the route's key and base_url, then build again: the batches made so far are recorded and " +
        "collected, the rest submitted",
    );
  }
}
