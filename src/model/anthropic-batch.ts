// Anthropic's Message Batches (docs.anthropic.com/en/api/creating-message-batches,
// retrieving-message-batches, retrieving-message-batch-results, canceling-message-batches): POST
// /v1/messages/batches with {requests: [{custom_id, params}]} (params: a Messages API body), GET
// /v1/messages/batches/{id} (processing_status in_progress, canceling or ended; results_url once ended),
// the results as JSONL from results_url, each {custom_id, result: {type: succeeded (message) | errored
// (error) | canceled | expired}}, and POST /v1/messages/batches/{id}/cancel. A batch keeps no label of the
// caller's (the Message Batch object: id, type, processing_status, request_counts, ended_at, created_at,
// expires_at, cancel_initiated_at, results_url), so a batch a killed build made is found in GET
// /v1/messages/batches?limit&after_id (docs.anthropic.com/en/api/listing-message-batches, newest first:
// {data, has_more, last_id}) by when it was made and how many requests it holds; its results' custom_ids
// (the request keys) then say which of them it answers, and the others are sent again.
import type { Json } from "../util/json.js";
import {
  jsonLines,
  type BatchApi,
  type BatchHttp,
  type BatchLine,
  type BatchState,
  type PendingBatch,
  CLOCK_SKEW_S,
} from "./batch-api.js";

/** "A Message Batch is limited to either 100,000 Message requests or 256 MB in size, whichever is reached
 *  first" (docs.anthropic.com/en/docs/build-with-claude/batch-processing, "Batch limitations"). */
export const ANTHROPIC_BATCH_LIMITS = { requests: 100_000, bytes: 256 * 1_000_000 };

interface ResultLine {
  custom_id: string;
  result: {
    type: string;
    message?: Json;
    error?: { error?: { type?: string; message?: string }; type?: string; message?: string };
  };
}

export class AnthropicBatches implements BatchApi {
  readonly limits = ANTHROPIC_BATCH_LIMITS;

  /** `messages`: the protocol's path of a message (/v1/messages under Anthropic's base URL); the batches
   *  are under it. */
  constructor(
    private readonly http: BatchHttp,
    private readonly messages = "/v1/messages",
  ) {}

  entry(key: string, payload: Buffer): Buffer {
    return Buffer.concat([
      Buffer.from(`{"custom_id":${JSON.stringify(key)},"params":`),
      payload,
      Buffer.from("}"),
    ]);
  }

  /** Anthropic keeps no label of a batch: `tag` is not sent (find() matches by time and size). */
  async submit(entries: Buffer[], _tag: string): Promise<string> {
    const parts: Buffer[] = [Buffer.from('{"requests":[')];
    entries.forEach((entry, i) => parts.push(...(i ? [Buffer.from(","), entry] : [entry])));
    parts.push(Buffer.from("]}"));
    const body = new Uint8Array(Buffer.concat(parts));
    return (JSON.parse(await this.http.call("POST", `${this.messages}/batches`, body)) as { id: string }).id;
  }

  /** The earliest batch not `known` made since shortly before `pending` was recorded, of its size. */
  async find(pending: PendingBatch, known: ReadonlySet<string>): Promise<string | null> {
    const since = Date.parse(pending.at) - CLOCK_SKEW_S * 1000;
    let after = "";
    let found: string | null = null;
    for (;;) {
      const query = `?limit=100${after ? `&after_id=${encodeURIComponent(after)}` : ""}`;
      const page = JSON.parse(await this.http.call("GET", `${this.messages}/batches${query}`)) as {
        data: { id: string; created_at: string; request_counts: Record<string, number> }[];
        has_more?: boolean;
        last_id?: string;
      };
      for (const batch of page.data) {
        if (Date.parse(batch.created_at) < since) return found;
        const size = Object.values(batch.request_counts).reduce((sum, count) => sum + count, 0);
        if (size === pending.keys.length && !known.has(batch.id)) found = batch.id;
      }
      if (!page.has_more || !page.last_id) return found;
      after = page.last_id;
    }
  }

  async state(id: string): Promise<BatchState> {
    const batch = JSON.parse(
      await this.http.call("GET", `${this.messages}/batches/${encodeURIComponent(id)}`),
    ) as {
      processing_status: string;
      results_url?: string | null;
    };
    const done = batch.processing_status === "ended";
    return {
      id,
      status: batch.processing_status,
      done,
      results: batch.results_url ? [batch.results_url] : [],
    };
  }

  async cancel(id: string): Promise<void> {
    await this.http.call("POST", `${this.messages}/batches/${encodeURIComponent(id)}/cancel`);
  }

  async results(state: BatchState): Promise<BatchLine[]> {
    const out: BatchLine[] = [];
    for (const url of state.results)
      for (const row of jsonLines<ResultLine>(await this.http.call("GET", url))) out.push(this.line(row));
    return out;
  }

  private line({ custom_id, result }: ResultLine): BatchLine {
    if (result.type === "succeeded" && result.message)
      return { custom_id, body: result.message, error: null };
    const inner = result.error?.error ?? result.error;
    const why = inner ? `${result.type}: ${inner.type ?? ""} ${inner.message ?? ""}`.trim() : result.type;
    return { custom_id, body: null, error: this.http.redact(why) };
  }
}
