// A run's replies that are not the model's text answer, counted for the audit (metrics.reply_audit): the
// model's refusals, the provider's content filter and tool calls are stored and scored (they are what the
// deployed model answers; docs/model-requests.md), and never hidden.

/** The fields of a reply record the audit reads (src/contract/records.ts: ReplyRecord). */
export interface AuditedReply {
  error: string | null;
  finish_reason: string | null;
  refusal?: string;
  tool_calls?: number;
}

export interface NonAnswers {
  /** Replies whose model refused (OpenAI's `refusal` field). */
  refusals: number;
  /** Replies the provider's filter withheld (finish_reason content_filter). */
  content_filtered: number;
  /** Replies that called a tool instead of answering. */
  tool_calls: number;
}

/** The answered replies that hold no text answer, by kind (a reply is counted under one kind at most). */
export function nonAnswers(replies: readonly AuditedReply[]): NonAnswers {
  const out: NonAnswers = { refusals: 0, content_filtered: 0, tool_calls: 0 };
  for (const r of replies) {
    if (r.error !== null) continue;
    if (r.refusal !== undefined) out.refusals++;
    else if (r.finish_reason === "content_filter") out.content_filtered++;
    else if ((r.tool_calls ?? 0) > 0 || r.finish_reason === "tool_calls") out.tool_calls++;
  }
  return out;
}

/** The terminal's line on them, or null when every answered reply is a text answer. */
export function nonAnswerWarning(model: string, counts: NonAnswers, of: number): string | null {
  const parts = [
    counts.refusals ? `${counts.refusals} refused by the model` : "",
    counts.content_filtered ? `${counts.content_filtered} withheld by the provider's content filter` : "",
    counts.tool_calls ? `${counts.tool_calls} tool calls instead of an answer` : "",
  ].filter((x) => x);
  if (parts.length === 0) return null;
  return (
    `${model}: ${parts.join(", ")} (of ${of} replies); they are the model's answers, scored as giving ` +
    "no valid answer (metrics.reply_audit)"
  );
}
