// What a provider's batch API is to medbench (build --batch, stages/model-batch.ts): requests in, an id out,
// a state to read, the results of a finished batch line by line, and a cancel. One implementation per
// protocol that has one, chosen here by the route's protocol name; the HTTP under it is plain fetch with the
// protocol's own headers, and nothing else of a provider's.
import type { Json } from "../util/json.js";
import type { Route } from "./registry.js";
import type { Protocol } from "./protocol.js";
import { redact } from "./redact.js";

/** A batch's state as the provider says it. */
export interface BatchState {
  id: string;
  status: string;
  /** Terminal: nothing more will change (its results, if any, can be read). */
  done: boolean;
  /** Where its results are (OpenAI's output and error file ids, Anthropic's results_url). */
  results: string[];
  /** Why the provider failed or stopped the whole batch, when it says (OpenAI's errors, Gemini's error). */
  error?: string;
}

/** One request's result in a finished batch: a reply body, or why there is none. */
export interface BatchLine {
  custom_id: string;
  body: Json | null;
  error: string | null;
}

/** A batch about to be made, recorded before the create call (stages/model-batch.ts): the name the provider
 *  keeps it by (`tag`), when, and how many requests, so that a build killed before it recorded the batch's
 *  id finds the batch rather than submit its requests twice. */
export interface PendingBatch {
  tag: string;
  at: string;
  keys: string[];
}

/** How far a provider's clock may be behind this machine's when it stamps a batch made (find()). */
export const CLOCK_SKEW_S = 600;

export interface BatchApi {
  /** The most requests and bytes (of `entry`s) one batch takes. */
  readonly limits: { requests: number; bytes: number };
  /** One request as the batch's input holds it (its `custom_id` the request key). */
  entry(key: string, payload: Buffer): Buffer;
  /** Makes a batch of the entries, labelled `tag` where the provider keeps a label; its id. */
  submit(entries: Buffer[], tag: string): Promise<string>;
  /** The id of the batch a build made for `pending`, as the provider lists its batches (none of `known`, the
   *  batches already recorded), or null. */
  find(pending: PendingBatch, known: ReadonlySet<string>): Promise<string | null>;
  state(id: string): Promise<BatchState>;
  results(state: BatchState): Promise<BatchLine[]>;
  cancel(id: string): Promise<void>;
}

/** The HTTP of a batch API: the route's base URL, the protocol's headers and the route's, errors
 *  redacted. */
export class BatchHttp {
  constructor(
    private readonly route: Route,
    private readonly headers: Record<string, string>,
    private readonly secrets: readonly string[],
  ) {}

  url(path: string): string {
    return (this.route.base_url_with_secrets ?? this.route.base_url).replace(/\/$/, "") + path;
  }

  /** A call; `path` under the base URL, or a whole URL the provider gave (a results URL). */
  async call(method: string, path: string, body?: BodyInit, json = true): Promise<string> {
    const headers: Record<string, string> = { ...this.headers, ...(this.route.headers ?? {}) };
    if (json && body !== undefined) headers["content-type"] = "application/json";
    const url = /^https?:\/\//.test(path) ? path : this.url(path);
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    if (!res.ok) {
      const shown = path.startsWith("http") ? "the results URL" : path;
      throw new Error(redact(`${method} ${shown}: HTTP ${res.status}: ${text.slice(0, 300)}`, this.secrets));
    }
    return text;
  }

  redact(text: string): string {
    return redact(text, this.secrets);
  }
}

/** The protocols medbench has a batch API for. */
export const BATCH_PROTOCOLS: readonly string[] = ["openai", "anthropic", "gemini"];

/** The batch API of a route's protocol for `model`, or null when medbench has none for it. */
export async function batchApiOf(
  protocol: Protocol,
  { route, model }: { route: Route; model: string },
  apiKey: string | undefined,
  secrets: readonly string[],
): Promise<BatchApi | null> {
  const http = new BatchHttp(route, protocol.headers(apiKey), secrets);
  if (protocol.name === "openai") return new (await import("./openai-batch.js")).OpenAIBatches(http);
  if (protocol.name === "anthropic")
    return new (await import("./anthropic-batch.js")).AnthropicBatches(http);
  if (protocol.name === "gemini") return new (await import("./gemini-batch.js")).GeminiBatches(http, model);
  return null;
}

/** Lines of JSON (a batch's results), blank ones left out. */
export function jsonLines<T>(text: string): T[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}
