// Gemini's Batch API (ai.google.dev/gemini-api/docs/batch-mode; reference ai.google.dev/api/batch-mode; the
// REST shapes as googleapis/js-genai reads and writes them at commit
// 6e9b35c45e21f0d37179a24d29dca01ebed698e6, src/batches.ts and src/converters/_batches_converters.ts): POST
// {base}/v1beta/models/{model}: batchGenerateContent with {batch: {displayName, inputConfig: {requests:
// {requests: [{request, metadata}]}}}} (inlined requests: each a GenerateContentRequest, its metadata {key:
// the request key}), answered by an operation {name: "batches/ID", metadata: {displayName, state, output,
// ...}}; GET /v1beta/batches/ID for its state; POST /v1beta/batches/ID:cancel; GET
// /v1beta/batches?pageSize&pageToken ({operations, nextPageToken}). Once done,
// metadata.output.inlinedResponses.inlinedResponses holds one {response} or {error} (a google.rpc.Status)
// per request, "in the same order as the input requests" (js-genai src/types.ts BatchJobDestination), each
// with the request's metadata.
import type { Json } from "../util/json.js";
import type { BatchApi, BatchHttp, BatchLine, BatchState, PendingBatch } from "./batch-api.js";
import { geminiPath } from "./gemini.js";

/** Inlined requests suit "smaller batches that keep the total request size under 20MB" (the guide, "Creating
 *  a batch job"): 20 MB read as 20,000,000 bytes, less 100,000 for the request's frame and the comma between
 *  two requests (each request here is far over 100 bytes). The docs give no count of requests. */
export const GEMINI_BATCH_LIMITS = { requests: Number.MAX_SAFE_INTEGER, bytes: 19_900_000 };

/** The REST states (BatchState: BATCH_STATE_*) by the names the guide and the SDKs give them (JOB_STATE_*,
 *  js-genai src/_transformers.ts tJobState); those after which nothing changes. */
const jobState = (state: string) => state.replace(/^BATCH_STATE_/, "JOB_STATE_");
const TERMINAL = new Set([
  "JOB_STATE_SUCCEEDED",
  "JOB_STATE_FAILED",
  "JOB_STATE_CANCELLED",
  "JOB_STATE_EXPIRED",
]);

interface Status {
  code?: number;
  message?: string;
  status?: string;
}
interface Operation {
  name: string;
  metadata?: {
    displayName?: string;
    state?: string;
    createTime?: string;
    output?: { inlinedResponses?: { inlinedResponses?: Inlined[] }; responsesFile?: string };
  };
  error?: Status;
}
interface Inlined {
  response?: Json;
  error?: Status;
  metadata?: { key?: string };
}

export class GeminiBatches implements BatchApi {
  readonly limits = GEMINI_BATCH_LIMITS;

  constructor(
    private readonly http: BatchHttp,
    private readonly model: string,
  ) {}

  entry(key: string, payload: Buffer): Buffer {
    return Buffer.concat([
      Buffer.from(`{"metadata":{"key":${JSON.stringify(key)}},"request":`),
      payload,
      Buffer.from("}"),
    ]);
  }

  /** The batch's display name (required by the API) is `tag`: a later build finds the batch by it. */
  async submit(entries: Buffer[], tag: string): Promise<string> {
    const head = `{"batch":{"displayName":${JSON.stringify(tag)},"inputConfig":{"requests":{"requests":[`;
    const parts: Buffer[] = [Buffer.from(head)];
    entries.forEach((entry, i) => parts.push(...(i ? [Buffer.from(","), entry] : [entry])));
    parts.push(Buffer.from("]}}}}"));
    const path = geminiPath(this.model).replace(/:generateContent$/, ":batchGenerateContent");
    const made = JSON.parse(await this.http.call("POST", path, new Uint8Array(Buffer.concat(parts))));
    return (made as Operation).name;
  }

  private async operation(id: string): Promise<Operation> {
    return JSON.parse(await this.http.call("GET", `/v1beta/${batchPath(id)}`)) as Operation;
  }

  async state(id: string): Promise<BatchState> {
    const operation = await this.operation(id);
    const status = jobState(operation.metadata?.state ?? "BATCH_STATE_UNSPECIFIED");
    const error = operation.error ? { error: this.http.redact(wording(operation.error)) } : {};
    return { id, status, done: TERMINAL.has(status), results: [id], ...error };
  }

  async cancel(id: string): Promise<void> {
    await this.http.call("POST", `/v1beta/${batchPath(id)}:cancel`);
  }

  /** The batch's inlined responses, each matched to its request by its metadata's key (a failed, cancelled
   *  or expired batch may have none: its requests are then left to the next build). */
  async results(state: BatchState): Promise<BatchLine[]> {
    const operation = await this.operation(state.id);
    const output = operation.metadata?.output;
    if (output?.responsesFile)
      throw new Error(`batch ${state.id} answered in a file (${output.responsesFile}), not inline`);
    const out: BatchLine[] = [];
    for (const row of output?.inlinedResponses?.inlinedResponses ?? []) {
      const key = row.metadata?.key;
      if (typeof key !== "string") continue;
      if (row.response !== undefined && !row.error)
        out.push({ custom_id: key, body: row.response, error: null });
      else out.push({ custom_id: key, body: null, error: this.http.redact(wording(row.error)) });
    }
    return out;
  }

  /** The batch a build made with display name `tag` (most recent first), or null. */
  async find(pending: PendingBatch, known: ReadonlySet<string>): Promise<string | null> {
    let token = "";
    for (let page = 0; page < 20; page++) {
      const query = `?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`;
      const listed = JSON.parse(await this.http.call("GET", `/v1beta/batches${query}`)) as {
        operations?: Operation[];
        nextPageToken?: string;
      };
      const found = (listed.operations ?? []).find(
        (x) => x.metadata?.displayName === pending.tag && !known.has(x.name),
      );
      if (found) return found.name;
      if (!listed.nextPageToken) return null;
      token = listed.nextPageToken;
    }
    return null;
  }
}

/** A batch's resource name (batches/ID) as a path, its ID escaped. */
const batchPath = (id: string) => `batches/${encodeURIComponent(id.replace(/^batches\//, ""))}`;

const wording = (status: Status | undefined) =>
  status ? `${status.status ?? status.code ?? "error"}: ${status.message ?? ""}`.trim() : "no response";
