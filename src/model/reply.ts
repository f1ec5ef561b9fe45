// Reading a chat completion as the providers send it: whether a 200's body is a reply at all (an error in a
// 200, an event stream, a body without a message are failed tries), and what a reply says (its text, a
// refusal, a filter, tool calls, reasoning signs, the model that served it). docs/model-requests.md.
import type { Json } from "../util/json.js";

/** What one reply says, read from its first choice. */
export interface ReplyReading {
  /** The content as text: a string, or the text parts of a list of parts; "" when there is none. */
  text: string;
  /** The model's refusal (OpenAI's `refusal` field), when it sent one. */
  refusal: string | null;
  finish_reason: string | null;
  /** Tool calls the reply made (none are offered: such a reply holds no answer in its content). */
  tool_calls: number;
  /** A reasoning field or part came back (reasoning, reasoning_content, thinking, reasoning_details). */
  reasoning: boolean;
  /** The reasoning text of a separate field, when the server sent one. */
  reasoning_content: string | null;
  /** The model the reply names (a provider may append a date or version, or a gateway substitute one). */
  served_model: string | null;
}

type Obj = Record<string, Json>;
const isObj = (value: unknown): value is Obj =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const firstChoice = (body: Obj): unknown => (Array.isArray(body.choices) ? body.choices[0] : undefined);

/** The provider's own words from an error object: its code or type, then its message (bounded). */
export function providerMessage(error: unknown): string {
  if (typeof error === "string") return error.slice(0, 300);
  if (!isObj(error)) return "no message";
  const code = error.code ?? error.type ?? null;
  const message = typeof error.message === "string" ? error.message : JSON.stringify(error);
  return `${code === null ? "" : `${String(code)}: `}${message}`.slice(0, 300);
}

/** Why a 200's body is not a reply: the provider reported an error in it, or it is malformed. */
export interface NotAReply {
  reported: boolean;
  why: string;
}

/**
 * Why a parsed 200 body is not a usable chat completion, or null when it is one. An error reported inside
 * a 200 (an `error` object at the top, vLLM's `object: "error"`, or a choice that ended with
 * finish_reason "error", as OpenRouter reports a failed generation) is a failed try like a 5xx.
 */
export function notAReply(parsed: unknown): NotAReply | null {
  const malformed = (why: string) => ({ reported: false, why });
  if (!isObj(parsed)) return malformed("not an object");
  if (parsed.error !== undefined && parsed.error !== null)
    return { reported: true, why: `an error in a 200 reply: ${providerMessage(parsed.error)}` };
  if (parsed.object === "error")
    return { reported: true, why: `an error in a 200 reply: ${providerMessage(parsed)}` };
  const choices = parsed.choices;
  if (!Array.isArray(choices)) return malformed("no choices");
  if (choices.length === 0) return malformed("choices is empty");
  const first = firstChoice(parsed);
  if (!isObj(first)) return malformed("the first choice has no message");
  if (first.finish_reason === "error" || (first.error !== undefined && first.error !== null)) {
    const why =
      `a failed generation in a 200 reply (finish_reason "error"): ` + providerMessage(first.error);
    return { reported: true, why };
  }
  if (!isObj(first.message)) return malformed("the first choice has no message");
  return null;
}

/** A 200's body text as a chat completion, or why it is none (a failed try), naming the content type. */
export function successBody(text: string, contentType: string | null): { body: Json } | { problem: string } {
  const type = (contentType ?? "no content-type").split(";")[0]!.trim();
  if (type === "text/event-stream" || /^\s*(data|event):/.test(text))
    return { problem: streamProblem(text) };
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    return { problem: `malformed response body (not JSON, ${type})` };
  }
  const problem = notAReply(parsed);
  if (problem === null) return { body: parsed };
  return {
    problem: problem.reported ? `${problem.why} (${type})` : `malformed response body (${problem.why})`,
  };
}

/** An event stream where a JSON reply was asked for (no request streams): its error event, if it has one. */
function streamProblem(text: string): string {
  const head = "an event stream (text/event-stream) where a JSON reply was expected";
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    let event: unknown;
    try {
      event = JSON.parse(line.slice(5));
    } catch {
      continue; // [DONE], comments, partial lines
    }
    const problem = notAReply(event);
    if (problem?.reported) return `${head}; the stream's error: ${problem.why}`;
  }
  return `${head}; medbench does not stream: remove \`stream\` from the route's request fields`;
}

/** The text parts of a list of content parts, joined; reasoning parts are signs of reasoning, not text. */
function listContent(parts: Json[]): { text: string; reasoning: boolean } {
  let text = "";
  let reasoning = false;
  for (const part of parts) {
    if (typeof part === "string") text += part;
    else if (isObj(part) && part.type === "text" && typeof part.text === "string") text += part.text;
    else if (isObj(part) && (part.type === "thinking" || part.type === "reasoning")) reasoning = true;
  }
  return { text, reasoning };
}

const REASONING_FIELDS = ["reasoning", "reasoning_content", "thinking"];

/** What a completion's first choice says (a body notAReply accepts). */
export function readReply(body: Json): ReplyReading {
  const reply = isObj(body) ? body : {};
  const choice = firstChoice(reply);
  const first: Obj = isObj(choice) ? choice : {};
  const msg: Obj = isObj(first.message) ? first.message : {};
  const list = Array.isArray(msg.content) ? listContent(msg.content) : null;
  const text = typeof msg.content === "string" ? msg.content : (list?.text ?? "");
  const reasoningText = [msg.reasoning_content, msg.reasoning].find((value) => typeof value === "string");
  return {
    text,
    refusal: typeof msg.refusal === "string" && msg.refusal.length > 0 ? msg.refusal : null,
    finish_reason: typeof first.finish_reason === "string" ? first.finish_reason : null,
    tool_calls: Array.isArray(msg.tool_calls) ? msg.tool_calls.length : 0,
    reasoning:
      REASONING_FIELDS.some(
        (field) => typeof msg[field] === "string" && (msg[field] as string).length > 0,
      ) ||
      (Array.isArray(msg.reasoning_details) && msg.reasoning_details.length > 0) ||
      list?.reasoning === true,
    reasoning_content: typeof reasoningText === "string" ? reasoningText : null,
    served_model: typeof reply.model === "string" ? reply.model : null,
  };
}
