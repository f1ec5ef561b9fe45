// What the reply memo holds: answers only. A failed request, a refusal (an auth failure above all), a
// malformed success or an error in a 200 is never stored, so the next build sends it again; entries written
// by older versions that are not answers (an error in a 200 among them) are ignored on reading.
import type { CallOutcome } from "./client.js";
import { notAReply } from "./reply.js";
import type { Json } from "../util/json.js";

export interface MemoReply {
  kind: "reply";
  status: number;
  body: Json;
  /** Which of the route's replicas answered (a route with replicas only): for audit, in no key. */
  server?: string;
}

/** The memo entry of an answer (only answers have one). */
export function memoReply(outcome: Extract<CallOutcome, { kind: "reply" }>): MemoReply {
  const server = outcome.server === undefined ? {} : { server: outcome.server };
  return { kind: "reply", status: outcome.status, body: outcome.body, ...server };
}

/** A stored entry, when it is an answer (a usable completion). `answers`: whether a body is one, as the
 *  route's protocol reads a 2xx (an Anthropic message or a Gemini response is no chat completion); by
 *  default, a chat completion's reading. */
export function recall(
  entry: Buffer | null,
  answers: (body: Json) => boolean = (body) => notAReply(body) === null,
): MemoReply | null {
  if (!entry) return null;
  try {
    const memo = JSON.parse(entry.toString("utf8")) as Partial<MemoReply>;
    if (memo.kind !== "reply" || !answers(memo.body as Json)) return null;
    return memo as MemoReply;
  } catch {
    return null;
  }
}
