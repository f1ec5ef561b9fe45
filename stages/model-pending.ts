// The requests of a model stage that have no reply yet: what a build would send (each body once, in the
// first response format it tries), found in the reply memo without sending anything. `status` estimates
// them, `--max-cost` weighs them before a stage sends, and a batch build submits them.
import type { StageContext } from "../src/contract/stage.js";
import type { Json } from "../src/util/json.js";
import type { WireFormat } from "../src/model/protocol.js";
import { ownsKey } from "../src/remote/shard.js";
import type { FirstBodies } from "./model-bodies.js";

/** One body a build would send: the first item that asks it, its bytes, its key and its format. */
export interface Pending {
  index: number;
  body: Record<string, Json>;
  payload: Buffer;
  key: string;
  format: WireFormat;
}

/** The requests of `bodies` without a reply, each body as made there (once for the whole stage). */
export async function pendingRequests(ctx: StageContext, bodies: FirstBodies): Promise<Pending[]> {
  const { protocol } = bodies.maker;
  const { recall } = await import("../src/model/reply-memo.js");
  const { recallRefusal } = await import("../src/model/refusal-memo.js");
  const namespace = ctx.options.replyNamespace ?? "requests";
  const { shard, refresh } = ctx.options;
  const answers = (body: Json) => "body" in protocol.success(JSON.stringify(body), "application/json");
  const seen = new Set<string>();
  const out: Pending[] = [];
  for (let index = 0; index < bodies.requests.length; index++) {
    const { body, payload, key, format } = bodies.prepared(index);
    if (seen.has(key) || (shard && !ownsKey(shard, key))) continue;
    seen.add(key);
    const entry = refresh ? null : await ctx.memo.get(namespace, key);
    if (recall(entry, answers) || recallRefusal(entry)) continue;
    out.push({ index, body, payload, key, format });
  }
  return out;
}
