// What a server's refusal (an HTTP 4xx) is about, read from its status and its error body as OpenAI and
// the OpenAI-compatible servers word it (OpenAI's protocol; another protocol reads its own),
// docs/model-requests.md, "Refusals". Only a refusal of the response format lowers the format an item is
// sent with; a refusal of the item itself (its length, a parameter) is its final outcome; a refusal of the
// route (the key, the model, the account's credit) stops the route; a prompt the provider's filter refused
// is final and counted as filtered.

export type RefusalKind =
  | "format"
  | "context_length"
  | "unsupported_parameter"
  | "filtered"
  | "route"
  | "request";

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
  /** The error's type (llama.cpp names the kind there), and Azure's innererror code. */
  type: string | null;
  inner: string | null;
}

/** Statuses that refuse every request of the route alike, the key (401, 403) or the model (404): they count
 *  toward the route's max_failures_in_a_row. */
export const stopsRoute = (status: number): boolean => status === 401 || status === 403 || status === 404;

/** A billing stop (402 Payment Required, as OpenRouter answers an account without credit): the route's. */
const PAYMENT_REQUIRED = 402;

/** A refusal of the item itself, final: the same request would be refused again until the server or the
 *  request changes. Any other refusal (one we cannot read) is a failed request, re-sent by the next
 *  build. */
export const isFinal = (refusal: Refusal): boolean =>
  refusal.kind === "context_length" ||
  refusal.kind === "unsupported_parameter" ||
  refusal.kind === "filtered";

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
const CONTEXT_WORDS = [
  /context_length_exceeded/i,
  /context length/i,
  /context window/i,
  // llama.cpp's server: type exceed_context_size_error,
  // "request (N tokens) exceeds the available context size"
  // (ggml-org/llama.cpp tools/server/server-common.cpp@aa6192d38defc9a5d9fb2987413f71b18f214270,
  // format_error_response)
  /exceed_context_size_error/i,
  /exceeds the available context size/i,
  // TGI's 422 validation errors (huggingface/text-generation-inference
  // router/src/validation.rs@06227f7b5e9d936fc3246f3d649b9e92f14d8559, MaxTotalTokens and InputLength)
  /`inputs` tokens \+ `max_new_tokens` must be <=/i,
  /`inputs` must have less than \d+ tokens/i,
];
// Azure OpenAI's prompt filter: HTTP 400, code content_filter, innererror.code ResponsibleAIPolicyViolation
// (https://learn.microsoft.com/azure/ai-services/openai/concepts/content-filter, "Scenario details").
const FILTER_CODES = new Set(["content_filter", "ResponsibleAIPolicyViolation"]);
const PARAMETER_CODES = new Set(["unsupported_parameter", "unsupported_value", "unknown_parameter"]);
const PARAMETER_WORDS = [/unsupported parameter/i, /unsupported value/i, /unrecognized request argument/i];

/** What the refusal of status `status` with body `body` is about. */
export function classifyRefusal(status: number, body: string): Refusal {
  const { message, param, code, type, inner } = errorFields(body);
  const out = (kind: RefusalKind): Refusal => ({ kind, status, message });
  // A redirect names another URL for the route: about the route too, never a request's final outcome.
  if (stopsRoute(status) || status < 400 || status === PAYMENT_REQUIRED) return out("route");
  if (code === "insufficient_quota" || ROUTE_WORDS.some((words) => words.test(message))) return out("route");
  if ((code !== null && FILTER_CODES.has(code)) || (inner !== null && FILTER_CODES.has(inner)))
    return out("filtered");
  // OpenAI names the field it refuses: a refusal of response_format is about the format, whatever its words.
  if (param !== null && /^response_format\b/.test(param)) return out("format");
  const said = `${type ?? ""} ${message}`;
  if (code === "context_length_exceeded" || CONTEXT_WORDS.some((words) => words.test(said)))
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
  const innerError = isRecord(inner.innererror) ? inner.innererror : {};
  return {
    message: message.trim().slice(0, MESSAGE_CHARS),
    param: text(inner.param),
    code: text(inner.code),
    type: text(inner.type),
    inner: text(innerError.code),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
