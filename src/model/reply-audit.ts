// A run's replies that are not the model's text answer, counted for the audit (metrics.reply_audit): the
// model's refusals, the provider's content filter and tool calls are stored and scored (they are what the
// deployed model answers; docs/model-requests.md), and never hidden; and the models the replies name.
import { servesAsked } from "./served-model.js";
import type { Json } from "../util/json.js";

/** The fields of a reply record the audit reads (src/contract/records.ts: ReplyRecord). */
export interface AuditedReply {
  error: string | null;
  text?: string;
  /** A refusal of the request for good (src/model/refusal.ts); a prompt filter's counts as filtered. */
  request_refused?: { kind: string };
  finish_reason: string | null;
  refusal?: string;
  tool_calls?: number;
  served_model?: string;
}

export interface NonAnswers {
  /** Replies whose model refused (OpenAI's `refusal` field). */
  refusals: number;
  /** Replies the provider's filter withheld (finish_reason content_filter). */
  content_filtered: number;
  /** Replies that called a tool instead of answering. */
  tool_calls: number;
  /** Replies with no text (content null or empty) and none of the above: said, as they score invalid. */
  empty?: number;
}

/** The answered replies that hold no text answer, by kind (a reply is counted under one kind at most). */
function nonAnswers(replies: readonly AuditedReply[]): NonAnswers {
  const out: NonAnswers = { refusals: 0, content_filtered: 0, tool_calls: 0 };
  let empty = 0;
  for (const reply of replies) {
    if (reply.error !== null) {
      // A prompt the provider's filter refused (Azure's 400 content_filter): filtered, as an output filter.
      if (reply.request_refused?.kind === "filtered") out.content_filtered++;
      continue;
    }
    if (reply.refusal !== undefined) out.refusals++;
    else if (reply.finish_reason === "content_filter") out.content_filtered++;
    else if ((reply.tool_calls ?? 0) > 0 || reply.finish_reason === "tool_calls") out.tool_calls++;
    else if (reply.text === "") empty++;
  }
  return empty ? { ...out, empty } : out;
}

/** The terminal's line on them, or null when every answered reply is a text answer. */
function nonAnswerWarning(model: string, counts: NonAnswers, of: number): string | null {
  const parts = [
    counts.refusals ? `${counts.refusals} refused by the model` : "",
    counts.content_filtered ? `${counts.content_filtered} withheld by the provider's content filter` : "",
    counts.tool_calls ? `${counts.tool_calls} tool calls instead of an answer` : "",
    counts.empty
      ? `${counts.empty} with no text (content null or empty) and no refusal, filter or tool call`
      : "",
  ].filter((x) => x);
  if (parts.length === 0) return null;
  return (
    `${model}: ${parts.join(", ")} (of ${of} replies); they are the model's answers, scored as giving ` +
    "no valid answer (metrics.reply_audit)"
  );
}

/** The models the answered replies name, counted, and how many of those replies name another model. */
function servedModels(
  replies: readonly AuditedReply[],
  asked: string,
): { served_models: Record<string, number>; served_model_mismatches: number } {
  const served: Record<string, number> = {};
  let mismatches = 0;
  for (const reply of replies) {
    if (reply.error !== null || reply.served_model === undefined) continue;
    served[reply.served_model] = (served[reply.served_model] ?? 0) + 1;
    if (!servesAsked(asked, reply.served_model)) mismatches++;
  }
  return { served_models: served, served_model_mismatches: mismatches };
}

/** The terminal's line on replies that name another model than the one asked for, or null. */
function mismatchWarning(model: string, asked: string, served: Record<string, number>): string | null {
  const others = Object.entries(served).filter(([name]) => !servesAsked(asked, name));
  if (others.length === 0) return null;
  const otherCount = others.reduce((sum, [, count]) => sum + count, 0);
  const names = others.map(([name, count]) => `${name}: ${count}`).join(", ");
  return (
    `${model}: ${otherCount} replies name another model than ${asked} (${names}); the route may serve a ` +
    "substitute (metrics.reply_audit.served_models)"
  );
}

/** A route's reply audit (metrics.reply_audit) and the terminal's warnings on it. `model` is ROUTE/MODEL,
 *  `asked` the model named in the requests. */
export function auditReplies(
  replies: readonly AuditedReply[],
  model: string,
  asked: string,
): { counts: Record<string, Json>; warnings: string[] } {
  const kinds = nonAnswers(replies);
  const served = servedModels(replies, asked);
  const answered = replies.filter((reply) => reply.error === null).length;
  const warnings = [
    nonAnswerWarning(model, kinds, answered),
    mismatchWarning(model, asked, served.served_models),
  ].filter((warning): warning is string => warning !== null);
  return { counts: { ...kinds, ...served }, warnings };
}
