// What a provider's wire protocol is to medbench: everything about the wire that differs between providers.
// The body sent for a task's request through a route, its bytes and key, the path and headers it goes with,
// whether a 2xx is a reply and what it says, what an error reply means (a try again, a refusal and of what,
// a route that cannot work) and the response formats the protocol can ask for. The transport
// (src/model/client.ts, http.ts) moves bytes and asks the protocol about each of these. A protocol is one
// module, registered by name in src/model/protocols.ts; a route names it (`protocol:` in a registry file).
import type { IncomingHttpHeaders } from "node:http";
import type { Json } from "../util/json.js";
import type { Route } from "./registry.js";
import type { CallHooks, CallOutcome } from "./client.js";
import type { Refusal } from "./refusal.js";
import type { Tokens } from "./price.js";
import type { RateAdvice } from "./rate-limit.js";

/** A task's request as a protocol reads it (a requests file's record, with the fields sent). */
export interface ChatRequest {
  messages: readonly { role: string; content: string }[];
  /** A JSON schema sent as the strict response format, with its name. */
  schema?: { name: string; schema: Json };
  /** Per-request generation fields; they override the stage's. */
  generation?: { [field: string]: Json | undefined };
  /** The request configuration it was built for, named in messages. */
  configuration?: string;
}

/** How a reply is asked to be shaped, most structured first. */
export type WireFormat = "json_schema" | "json_object" | "none";
export const WIRE_FORMATS: readonly WireFormat[] = ["json_schema", "json_object", "none"];

/** The stage's parameters that shape a body. */
export interface BodyParams {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  thinking?: "off" | "on";
  overrides?: Record<string, { assistant_prefill?: string; fields?: Record<string, Json> }>;
}

/** What one reply says, as a reply record keeps it (fields the server did not send are left out). */
export interface ReplyFields {
  text: string;
  /** How the reply ended, in medbench's words (OpenAI's): stop, length, tool_calls, content_filter. */
  finish_reason: string | null;
  reasoning: boolean;
  think: boolean;
  reasoning_content?: string | null;
  /** Reasoning tokens the usage reports, for a protocol whose usage names them otherwise than OpenAI's. */
  reasoning_tokens?: number;
  usage?: Json | null;
  refusal?: string;
  tool_calls?: number;
  served_model?: string;
}

/** A body the route cannot send (a field the model refuses, no way to switch thinking off), and the fix. */
export class UnsendableRequest extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

/** An error reply (not a 2xx) as the transport received it. */
export interface ErrorReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** What an error reply means for its request. */
export type ErrorReading =
  /** Another try may be answered, after the server's wait when it gives one; a rate limit pauses the route
   *  (and spends none of the request's tries). */
  | { kind: "retry"; rateLimited: boolean; advice: RateAdvice }
  /** No request of the route can be answered (out of quota, a spend limit): why and what to do, with the
   *  provider's words. */
  | { kind: "stop_route"; why: string }
  /** The request is refused; `Protocol.refusal` reads what about. */
  | { kind: "refused" };

/** A model as a stage reaches it: through a route (its server, limits and fields), in the route's
 *  protocol. */
export interface RoutedModel {
  route: Route;
  protocol: Protocol;
  model: string;
}

/** The sending half, loaded only when requests are sent (a no-op build needs no HTTP client). */
export interface Transport {
  send(target: RoutedModel, body: Json, apiKey: string | undefined, hooks: CallHooks): Promise<CallOutcome>;
}

export interface Protocol {
  /** The name a route gives (`protocol:` in a registry file). */
  readonly name: string;
  /** The response formats it can ask for, most structured first; a task's schema goes as the first. */
  readonly formats: readonly WireFormat[];
  /** The path of a request for `model`, after the route's base URL's own path. */
  path(model: string): string;
  /** The headers that carry the key and the API version (the route's own headers are added to them). */
  headers(apiKey: string | undefined): Record<string, string>;
  /** The exact body sent; throws UnsendableRequest when the route's rules refuse it, by the request's fields
   *  other than its item's own text (`itemFields`): the check before sending makes one body per kind. */
  body(
    request: ChatRequest,
    params: BodyParams,
    route: Route,
    model: string,
    format: WireFormat,
  ): Record<string, Json>;
  /** The body's bytes as sent and its key, hashed from the same bytes. */
  serialise(route: Route, body: Json): { payload: Buffer; key: string };
  /** A 2xx's text as a reply body, or why it is none (an error inside it, a malformed body): a failed
   *  try. */
  success(text: string, contentType: string | null): { body: Json } | { problem: string };
  /** What a reply body says. */
  reply(body: Json): ReplyFields;
  /** A reply's usage (ReplyFields.usage, as the provider sent it) in medbench's token shape; null when the
   *  reply says nothing of its tokens. */
  tokens(usage: Json | undefined): Tokens | null;
  /** The most output tokens a body allows, from its max tokens field as this protocol names it (a rate
   *  limit counts them before a reply: the pacer's estimate); null when it has none. */
  outputBound(body: Json): number | null;
  /** What an error reply means; `tokens`: the request's estimated size, against the rate limits shown. */
  error(reply: ErrorReply, tokens: number): ErrorReading;
  /** What a refusal (an error reply read as refused) is about: its kind and the server's words. */
  refusal(status: number, body: string): Refusal;
  /** The body fields that carry an item's own text (absent: OpenAI's `messages`); metrics.request says what
   *  they held per item (how many, of which roles), never their text. */
  readonly itemFields?: readonly string[];
}

/** The first number found at one of the `paths` (field names from the body's top) of a body; null if
 *  none. */
export function numberAt(body: Json, ...paths: readonly (readonly string[])[]): number | null {
  for (const path of paths) {
    let value: unknown = body;
    for (const field of path)
      value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[field] : null;
    if (typeof value === "number") return value;
  }
  return null;
}

/** The body fields that carry an item's own text under a protocol. */
export const itemFieldsOf = (protocol: Protocol): readonly string[] => protocol.itemFields ?? ["messages"];

/** A body's fields but those that carry the item's own text. */
export function withoutItemFields(
  body: Record<string, Json>,
  itemFields: readonly string[],
): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [field, value] of Object.entries(body)) if (!itemFields.includes(field)) out[field] = value;
  return out;
}

/** What a body's item fields held, as metrics.request words it: "per item: 2 messages (system, user)". */
export function itemSummary(
  body: Record<string, Json>,
  itemFields: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of itemFields) {
    const value = body[field];
    if (value === undefined && field !== "messages") continue;
    if (!Array.isArray(value) && value !== undefined) {
      out[field] = "per item";
      continue;
    }
    const roles = (value ?? []).map((x) => String((x as { role?: Json } | null)?.role ?? ""));
    out[field] = `per item: ${roles.length} ${field} (${roles.join(", ")})`;
  }
  return out;
}
