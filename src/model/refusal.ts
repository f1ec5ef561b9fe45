// What a server's refusal (an HTTP 4xx) is about, read from its status and its error body as OpenAI and
// the OpenAI-compatible servers word it (OpenAI's protocol; another protocol reads its own),
// docs/model-requests.md, "Refusals". Only a refusal of the response format lowers the format an item is
// sent with; a refusal of the item itself (its length, a parameter) is its final outcome; a refusal of the
// route (the key, the model) stops the route.

export type RefusalKind = "format" | "context_length" | "unsupported_parameter" | "route" | "request";

export interface Refusal {
  kind: RefusalKind;
  status: number;
  /** The server's own message (already redacted), or the body's start when it has none. */
  message: string;
}

interface ErrorFields {
  message: string;
  param: string | null;
  code: string | null;
}

/** Statuses that refuse every request of the route alike, the key (401, 403) or the model (404): they count
 *  toward the route's max_failures_in_a_row. */
export const stopsRoute = (status: number): boolean => status === 401 || status === 403 || status === 404;

/** A refusal of the item itself, final: the same request would be refused again until the server or the
 *  request changes. Any other refusal (one we cannot read) is a failed request, re-sent by the next build. */
export const isFinal = (refusal: Refusal): boolean =>
  refusal.kind === "context_length" || refusal.kind === "unsupported_parameter";

/** A refusal that may be the route's own (the key, the model, or a 400 we cannot read, as some gateways
 *  answer an unknown model or a bad key): it counts toward the route's max_failures_in_a_row. */
export function countsAgainstRoute({ kind, status }: Refusal): boolean {
  return (kind === "route" && status >= 400) || kind === "request"; // a redirect is the URL's, said once
}

const MESSAGE_CHARS = 500;

// Wordings of a refused response format, each from the server that sends it (the corpus entries in
// scripts/provider-replies name the source).
const FORMAT_WORDS = [
  /features not supported by xgrammar/i, // vLLM
  /transform json schema into a grammar/i, // vLLM
  /invalid grammar request/i, // SGLang
  /json schema conversion failed/i, // llama.cpp's server, passed on by Ollama
  /invalid format: .*json schema/i, // Ollama
  /\bresponse_format\b/i, // OpenAI, and gateways that name the field
];
// A gateway that answers a route's own problem with a bare 400 (OpenRouter: an unknown model ID).
const ROUTE_WORDS = [/is not a valid model id/i];
const CONTEXT_WORDS = [/context_length_exceeded/i, /context length/i, /context window/i];
const PARAMETER_CODES = new Set(["unsupported_parameter", "unsupported_value", "unknown_parameter"]);
const PARAMETER_WORDS = [/unsupported parameter/i, /unsupported value/i, /unrecognized request argument/i];

/** What the refusal of status `status` with body `body` is about. */
export function classifyRefusal(status: number, body: string): Refusal {
  const { message, param, code } = errorFields(body);
  const out = (kind: RefusalKind): Refusal => ({ kind, status, message });
  // A redirect names another URL for the route: about the route too, never a request's final outcome.
  if (stopsRoute(status) || status < 400) return out("route");
  if (code === "insufficient_quota" || ROUTE_WORDS.some((words) => words.test(message))) return out("route");
  // OpenAI names the field it refuses: a refusal of response_format is about the format, whatever its words.
  if (param !== null && /^response_format\b/.test(param)) return out("format");
  if (code === "context_length_exceeded" || CONTEXT_WORDS.some((words) => words.test(message)))
    return out("context_length");
  if ((code !== null && PARAMETER_CODES.has(code)) || PARAMETER_WORDS.some((words) => words.test(message)))
    return out("unsupported_parameter");
  if (FORMAT_WORDS.some((words) => words.test(message))) return out("format");
  return out("request");
}

/** The error's message, param and code: OpenAI's `{error: {…}}`, SGLang's bare `{message, …}`, Ollama's
 *  `{error: "…"}`, or the text itself. */
export function errorFields(body: string): ErrorFields {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    /* not JSON: the text is the message */
  }
  const outer = isRecord(parsed) ? parsed : {};
  const inner = isRecord(outer.error) ? outer.error : outer;
  const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null);
  const message = text(inner.message) ?? text(outer.error) ?? body;
  return {
    message: message.trim().slice(0, MESSAGE_CHARS),
    param: text(inner.param),
    code: text(inner.code),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
