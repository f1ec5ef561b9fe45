// What a model stage's replies add up to, and what it says about them: failed requests, refusals, lower
// response formats, other shards' requests, by request configuration. Counted and said, never hidden.
import type { StageContext } from "../src/contract/stage.js";
import type { Json } from "../src/util/json.js";
import type { TaskRequest } from "../tasks/task.js";
import type { ReplyRecord } from "../src/contract/records.js";
import { OTHER_SHARD } from "./model-route.js";
import { WIRE_FORMATS } from "../src/model/protocol.js";

/** The most structured format, a task's schema sent as such (the first of every protocol's formats). */
const BEST = WIRE_FORMATS[0]!;

/** The requests refused for good, in all and by kind of refusal. */
export type RefusedCounts = { n: number; by_kind: Record<string, number> };

/** The replies by outcome. */
export interface ReplyTally {
  formats: Record<string, number>;
  otherShards: number;
  refused: RefusedCounts | null;
  apiErrors: number;
}

export function tally(replies: ReplyRecord[]): ReplyTally {
  const formats: Record<string, number> = {};
  for (const reply of replies) formats[reply.format] = (formats[reply.format] ?? 0) + 1;
  const otherShards = replies.filter((reply) => reply.error === OTHER_SHARD).length;
  const refused = refusalCounts(replies);
  const failed = replies.filter((reply) => reply.error !== null).length;
  return { formats, otherShards, refused, apiErrors: failed - otherShards - (refused?.n ?? 0) };
}

/** A warning when items with a schema went with a lower response format than json_schema: how many, with
 *  which format, and the server's first refusal of the schema. */
export function warnLowerFormats(
  ctx: StageContext,
  model: string,
  requests: TaskRequest[],
  replies: ReplyRecord[],
  refusal: string | null,
): void {
  const lower: Record<string, number> = {};
  replies.forEach((reply, i) => {
    if (reply && requests[i]!.schema && reply.format !== BEST && reply.error !== OTHER_SHARD)
      lower[reply.format] = (lower[reply.format] ?? 0) + 1;
  });
  const total = Object.values(lower).reduce((sum, count) => sum + count, 0);
  if (total === 0) return;
  const counts = Object.entries(lower).map(([format, count]) => `${format} ${count}`);
  ctx.emit({
    type: "warning",
    stage: ctx.stage,
    message:
      `${model}: ${total} of ${replies.length} items were sent with a lower response format than ` +
      `${BEST} (${counts.join(", ")}; metrics.response_format counts each)` +
      (refusal ? `: the server refused the schema (${refusal})` : ""),
  });
}

/** The requests refused for good, in all and by kind of refusal; null when none was. */
function refusalCounts(replies: ReplyRecord[]): RefusedCounts | null {
  const byKind: Record<string, number> = {};
  let refusedCount = 0;
  for (const reply of replies)
    if (reply?.request_refused) {
      refusedCount++;
      byKind[reply.request_refused.kind] = (byKind[reply.request_refused.kind] ?? 0) + 1;
    }
  return refusedCount ? { n: refusedCount, by_kind: byKind } : null;
}

/** Whether the server refused every request for a parameter: no item has a verdict, so the run is not
 *  complete, whatever the refusals' being final says of each item. */
export const allRefusedForParameter = (refused: RefusedCounts | null, requestCount: number): boolean =>
  requestCount > 0 && refused?.by_kind.unsupported_parameter === requestCount;

/** How many requests the server refused for good, why, and the first one's message (already redacted). */
export function warnRefused(
  ctx: StageContext,
  model: string,
  replies: ReplyRecord[],
  refused: RefusedCounts,
) {
  const first = replies.find((reply) => reply?.request_refused)!.request_refused!;
  const kinds = Object.entries(refused.by_kind).map(
    ([kind, count]) => `${kind.replace(/_/g, " ")} ${count}`,
  );
  ctx.emit({
    type: "warning",
    stage: ctx.stage,
    message:
      `${model}: the server refused ${refused.n} of ${replies.length} requests (${kinds.join(", ")}): ` +
      "final, no verdict for those items, not sent again (--refresh model sends every request again); " +
      `the first: HTTP ${first.status}: ${first.message.slice(0, 300)}`,
  });
  if (allRefusedForParameter(refused, replies.length))
    ctx.incomplete?.(
      `the server refused every request (${replies.length}) for a parameter: no item has a verdict; ` +
        "change or remove that field (in the spec's request or the route's request fields, or a per-model " +
        "rule), then build with --refresh model",
    );
}

/** Failed requests: the first error in the provider's words (redacted by the client), not only a count. */
export function warnFailed(ctx: StageContext, model: string, replies: ReplyRecord[], apiErrors: number) {
  const first = replies.find((reply) => reply.error !== null && reply.error !== OTHER_SHARD)!.error!;
  ctx.emit({
    type: "warning",
    stage: ctx.stage,
    message:
      `${model}: ${apiErrors} of ${replies.length} requests failed ` +
      "(API errors; no verdict for those items); " +
      `the next build sends them again; the first: ${first.slice(0, 300)}`,
  });
  ctx.incomplete?.(`${apiErrors} of ${replies.length} requests failed`);
}

/** Requests left to the other machines of a --shard run: said, and the run is not whole. */
export function noteOtherShards(ctx: StageContext, model: string, total: number, otherShards: number) {
  const shard = ctx.options.shard!;
  ctx.emit({
    type: "info",
    stage: ctx.stage,
    message:
      `${model}: shard ${shard.index}/${shard.count}: ${otherShards} of ${total} requests ` +
      "left to the other shards",
  });
  ctx.incomplete?.(`${otherShards} of ${total} requests are other shards' (--shard)`);
}

/** API errors, truncated replies and requests of each request configuration (replies in request order). */
export function countsByConfiguration(
  requests: TaskRequest[],
  replies: ReplyRecord[],
): Record<string, Json> {
  const out: Record<string, { api_errors: number; truncated: number; n: number }> = {};
  requests.forEach((req, i) => {
    const counts = (out[req.configuration ?? ""] ??= { api_errors: 0, truncated: 0, n: 0 });
    const reply = replies[i];
    counts.n++;
    if (reply && reply.error !== null && reply.error !== OTHER_SHARD && !reply.request_refused)
      counts.api_errors++;
    if (reply?.finish_reason === "length") counts.truncated++;
  });
  return out;
}
