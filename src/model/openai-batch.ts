// OpenAI's Batch API (platform.openai.com/docs/guides/batch, /docs/api-reference/batch): a JSONL input file
// uploaded with POST /v1/files (purpose=batch), a batch made of it with POST /v1/batches (endpoint
// /v1/chat/completions, completion_window 24h), its state read with GET /v1/batches/{id}, its output and
// error files with GET /v1/files/{id}/content, and POST /v1/batches/{id}/cancel. The HTTP is plain fetch:
// nothing in it is OpenAI's but the paths and shapes here.
import type { Json } from "../util/json.js";
import type { Route } from "./registry.js";
import { redact } from "./redact.js";

/** OpenAI's limits per batch: an input file of at most 50,000 requests and 200 MB (API reference, "Create
 *  batch", input_file_id: platform.openai.com/docs/api-reference/batch/create; quoted by docs.rs
 *  async-openai 0.42.0 src/types/batches/batch.rs). */
export const OPENAI_BATCH_LIMITS = { requests: 50_000, bytes: 200 * 1_000_000 };

/** A batch's state as the provider says it, with the files of its results. */
export interface BatchState {
  id: string;
  status: string;
  /** Terminal: nothing more will change (completed, failed, expired, cancelled). */
  done: boolean;
  output_file_id: string | null;
  error_file_id: string | null;
}

/** One line of a batch's output or error file: a reply body, or why there is none. */
export interface BatchLine {
  custom_id: string;
  body: Json | null;
  error: string | null;
}

const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);

export class OpenAIBatches {
  constructor(
    private readonly route: Route,
    private readonly apiKey: string | undefined,
    private readonly secrets: readonly string[],
  ) {}

  private url(path: string): string {
    return (this.route.base_url_with_secrets ?? this.route.base_url).replace(/\/$/, "") + path;
  }

  private async call(method: string, path: string, body?: BodyInit, json = true): Promise<string> {
    const headers: Record<string, string> = { ...(this.route.headers ?? {}) };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (json && body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(this.url(path), { method, headers, body });
    const text = await res.text();
    if (!res.ok)
      throw new Error(redact(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`, this.secrets));
    return text;
  }

  /** Uploads the input file and makes a batch of it; the batch's id. */
  async submit(lines: Buffer): Promise<string> {
    const form = new FormData();
    form.append("purpose", "batch");
    form.append(
      "file",
      new Blob([new Uint8Array(lines)], { type: "application/jsonl" }),
      "medbench-batch.jsonl",
    );
    const file = JSON.parse(await this.call("POST", "/files", form, false)) as { id: string };
    const made = { input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" };
    const batch = JSON.parse(await this.call("POST", "/batches", JSON.stringify(made))) as { id: string };
    return batch.id;
  }

  async state(id: string): Promise<BatchState> {
    const batch = JSON.parse(await this.call("GET", `/batches/${encodeURIComponent(id)}`)) as {
      status: string;
      output_file_id?: string | null;
      error_file_id?: string | null;
    };
    return {
      id,
      status: batch.status,
      done: TERMINAL.has(batch.status),
      output_file_id: batch.output_file_id ?? null,
      error_file_id: batch.error_file_id ?? null,
    };
  }

  async cancel(id: string): Promise<void> {
    await this.call("POST", `/batches/${encodeURIComponent(id)}/cancel`);
  }

  /** The lines of an output or error file: each `{custom_id, response: {status_code, body}, error}`. */
  async lines(fileId: string): Promise<BatchLine[]> {
    const text = await this.call("GET", `/files/${encodeURIComponent(fileId)}/content`);
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => {
        const row = JSON.parse(line) as {
          custom_id: string;
          response?: { status_code?: number; body?: Json } | null;
          error?: { code?: string; message?: string } | null;
        };
        const status = row.response?.status_code ?? 0;
        if (status === 200 && row.response?.body)
          return { custom_id: row.custom_id, body: row.response.body, error: null };
        const why =
          row.error?.message ?? `HTTP ${status}: ${JSON.stringify(row.response?.body ?? null).slice(0, 200)}`;
        return { custom_id: row.custom_id, body: null, error: redact(why, this.secrets) };
      });
  }
}

/** One request's line of an input file. */
export function batchLine(key: string, payload: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`{"custom_id":${JSON.stringify(key)},"method":"POST","url":"/v1/chat/completions","body":`),
    payload,
    Buffer.from("}\n"),
  ]);
}

/** Bodies split into batches within the limits: at most `requests` lines and `bytes` bytes each. */
export function splitBatches<T extends { line: Buffer }>(
  items: readonly T[],
  limits: { requests: number; bytes: number },
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length && (current.length >= limits.requests || bytes + item.line.length > limits.bytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.line.length;
  }
  if (current.length) out.push(current);
  return out;
}
