// What a provider's wire protocol is to medbench: the body sent for a task's request through a route, the
// bytes and key of that body, what a reply says, and the transport that sends it. The model stage knows
// only this interface; OpenAI's chat completions (src/model/openai.ts) is the one protocol so far.
import type { Json } from "../util/json.js";
import type { Route } from "./registry.js";
import type { CallHooks, CallOutcome } from "./client.js";
import type { Refusal } from "./refusal.js";
import type { Tokens } from "./price.js";

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
  finish_reason: string | null;
  reasoning: boolean;
  think: boolean;
  reasoning_content?: string | null;
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

/** The sending half, loaded only when requests are sent (a no-op build needs no HTTP client). */
export interface Transport {
  send(route: Route, body: Json, apiKey: string | undefined, hooks: CallHooks): Promise<CallOutcome>;
  /** What a refusal (a non-transient HTTP error) says about the request: its kind and the server's words. */
  refusal(status: number, body: string): Refusal;
}

export interface Protocol {
  /** The exact body sent; throws UnsendableRequest when the route's rules refuse it. */
  body(
    request: ChatRequest,
    params: BodyParams,
    route: Route,
    model: string,
    format: WireFormat,
  ): Record<string, Json>;
  /** The body's bytes as sent and its key, hashed from the same bytes. */
  serialise(route: Route, body: Json): { payload: Buffer; key: string };
  /** What a reply body says. */
  reply(body: Json): ReplyFields;
  /** A reply's usage (ReplyFields.usage, as the provider sent it) in medbench's token shape; null when the
   *  reply says nothing of its tokens. */
  tokens(usage: Json | undefined): Tokens | null;
  transport(): Promise<Transport>;
}
