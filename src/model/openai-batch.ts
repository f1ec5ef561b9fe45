// OpenAI's Batch API (platform.openai.com/docs/guides/batch, /docs/api-reference/batch): a JSONL input file
// uploaded with POST /v1/files (purpose=batch), a batch made of it with POST /v1/batches (endpoint
// /v1/chat/completions, completion_window 24h), its state read with GET /v1/batches/{id}, its output and
// error files with GET /v1/files/{id}/content, and POST /v1/batches/{id}/cancel. Each batch carries
// metadata {medbench_batch: TAG} ("Set of 16 key-value pairs that can be attached to an object", API
// reference, "Create batch", metadata), found again in GET /v1/batches?limit&after (a list, newest first:
// {data, has_more, last_id}; API reference, "List batch").
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

/** OpenAI's limits per batch: an input file of at most 50,000 requests and 200 MB (API reference, "Create
 *  batch", input_file_id: platform.openai.com/docs/api-reference/batch/create; quoted by docs.rs
 *  async-openai 0.42.0 src/types/batches/batch.rs). */
export const OPENAI_BATCH_LIMITS = { requests: 50_000, bytes: 200 * 1_000_000 };

/** The metadata field that names a batch for medbench. */
const TAG_FIELD = "medbench_batch";

// The statuses after which a batch does not change (guide, "4. Check the status of a batch").
const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);

interface OutputLine {
  custom_id: string;
  response?: { status_code?: number; body?: Json } | null;
  error?: { code?: string; message?: string } | null;
}

export class OpenAIBatches implements BatchApi {
  readonly limits = OPENAI_BATCH_LIMITS;

  constructor(private readonly http: BatchHttp) {}

  entry(key: string, payload: Buffer): Buffer {
    return Buffer.concat([
      Buffer.from(
        `{"custom_id":${JSON.stringify(key)},"method":"POST","url":"/v1/chat/completions","body":`,
      ),
      payload,
      Buffer.from("}\n"),
    ]);
  }

  /** Uploads the input file and makes a batch of it; the batch's id. */
  async submit(entries: Buffer[], tag: string): Promise<string> {
    const form = new FormData();
    form.append("purpose", "batch");
    const file = new Blob([new Uint8Array(Buffer.concat(entries))], { type: "application/jsonl" });
    form.append("file", file, "medbench-batch.jsonl");
    const uploaded = JSON.parse(await this.http.call("POST", "/files", form, false)) as { id: string };
    const made = {
      input_file_id: uploaded.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { [TAG_FIELD]: tag },
    };
    return (JSON.parse(await this.http.call("POST", "/batches", JSON.stringify(made))) as { id: string }).id;
  }

  /** The batch labelled `pending.tag`, among those made since shortly before it was recorded. */
  async find(pending: PendingBatch, known: ReadonlySet<string>): Promise<string | null> {
    const since = Date.parse(pending.at) / 1000 - CLOCK_SKEW_S;
    let after = "";
    for (;;) {
      const query = `?limit=100${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const page = JSON.parse(await this.http.call("GET", `/batches${query}`)) as {
        data: { id: string; created_at?: number; metadata?: Record<string, string> | null }[];
        has_more?: boolean;
        last_id?: string;
      };
      const found = page.data.find(
        (batch) => batch.metadata?.[TAG_FIELD] === pending.tag && !known.has(batch.id),
      );
      if (found) return found.id;
      const older = page.data.some((batch) => (batch.created_at ?? Infinity) < since);
      if (older || !page.has_more || !page.last_id) return null;
      after = page.last_id;
    }
  }

  async state(id: string): Promise<BatchState> {
    const batch = JSON.parse(await this.http.call("GET", `/batches/${encodeURIComponent(id)}`)) as {
      status: string;
      output_file_id?: string | null;
      error_file_id?: string | null;
      errors?: { data?: { code?: string; message?: string }[] } | null;
    };
    const files = [batch.output_file_id, batch.error_file_id].filter((x): x is string => Boolean(x));
    const said = (batch.errors?.data ?? []).map((x) => `${x.code ?? "error"}: ${x.message ?? ""}`);
    const error = said.length ? { error: this.http.redact(said.join("; ")) } : {};
    return { id, status: batch.status, done: TERMINAL.has(batch.status), results: files, ...error };
  }

  async cancel(id: string): Promise<void> {
    await this.http.call("POST", `/batches/${encodeURIComponent(id)}/cancel`);
  }

  /** The lines of its output and error files: `{custom_id, response: {status_code, body}, error}` each. */
  async results(state: BatchState): Promise<BatchLine[]> {
    const out: BatchLine[] = [];
    for (const file of state.results) {
      const text = await this.http.call("GET", `/files/${encodeURIComponent(file)}/content`);
      for (const row of jsonLines<OutputLine>(text)) out.push(this.line(row));
    }
    return out;
  }

  private line(row: OutputLine): BatchLine {
    const status = row.response?.status_code ?? 0;
    if (status === 200 && row.response?.body)
      return { custom_id: row.custom_id, body: row.response.body, error: null };
    const body = JSON.stringify(row.response?.body ?? null).slice(0, 200);
    const why = row.error
      ? `${row.error.code ?? "error"}: ${row.error.message ?? ""}`
      : `HTTP ${status}: ${body}`;
    return { custom_id: row.custom_id, body: null, error: this.http.redact(why) };
  }
}
