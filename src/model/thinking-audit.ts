// The thinking audit of a run: how many replies show reasoning, by the sign that shows it. OpenAI's
// reasoning models (gpt-5 family, o-series) and OpenRouter return no reasoning text in chat completions,
// only a count in usage.completion_tokens_details.reasoning_tokens: hidden reasoning is counted from it.
import type { Json } from "../util/json.js";

/** What the audit reads of one reply (a reply record of the model stage). */
export interface AuditedReply {
  /** A reasoning field with text (reasoning, reasoning_content, thinking, reasoning_details). */
  reasoning: boolean;
  /** A think tag in the text, opening or closing. */
  think: boolean;
  /** The server's usage object as returned. */
  usage?: Json | null;
  /** The reasoning tokens a protocol read from its usage (Anthropic's thinking tokens, Gemini's
   *  thoughts). */
  reasoning_tokens?: number;
}

/**
 * The reasoning tokens a reply's usage reports: usage.completion_tokens_details.reasoning_tokens (OpenAI,
 * OpenRouter) or usage.reasoning_tokens (SGLang's UsageInfo); null when it reports none.
 */
export function reasoningTokens(usage: Json | null | undefined): number | null {
  if (!isObject(usage)) return null;
  const details = usage.completion_tokens_details;
  const tokens = isObject(details) ? details.reasoning_tokens : usage.reasoning_tokens;
  return typeof tokens === "number" && Number.isFinite(tokens) ? tokens : null;
}

const isObject = (value: Json | null | undefined): value is Record<string, Json> =>
  value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value);

/**
 * The audit recorded in metrics.thinking_audit. `replies_with_reasoning_tokens` is there only when some
 * reply reported a reasoning-token count (0 included): absent, the server reports none, which is not the
 * same as reporting none spent. Thinking is off only when no reply shows reasoning by any sign.
 */
export function thinkingAudit(replies: readonly AuditedReply[]): Record<string, Json> {
  let field = 0,
    block = 0,
    hidden = 0,
    reported = false;
  for (const reply of replies) {
    const tokens = reply.reasoning_tokens ?? reasoningTokens(reply.usage);
    if (tokens !== null) reported = true;
    if (reply.reasoning) field++;
    if (reply.think) block++;
    if (tokens !== null && tokens > 0) hidden++;
  }
  return {
    replies_with_reasoning_field: field,
    replies_with_think_block: block,
    ...(reported ? { replies_with_reasoning_tokens: hidden } : {}),
    thinking_off: field === 0 && block === 0 && hidden === 0,
  };
}
