// The records that flow between stages, and the one place that reads and writes them (JSON lines).
// Stage kinds and tasks exchange only these shapes; a new field is added here, once.
import {
  closeSync,
  createHash,
  fsyncSync,
  openSync,
  readSync,
  writeFileSync,
  writeSync,
} from "../util/builtins.js";
import { StringDecoder } from "node:string_decoder";
import { jsonLines, parseJsonLines, sortedJson, type Json } from "../util/json.js";
import { sortedJsonText } from "../util/sorted-json.js";
import { sha256Hex } from "../hash/sha256.js";

export type Role = "system" | "user" | "assistant";

/** Generation fields a request (or a request configuration) sets; sent in the body and part of its key. */
export interface GenerationFields {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  [field: string]: Json | undefined;
}

/** One model request of a task, before any route's fields are applied (prompts/requests). */
export interface RequestRecord {
  id: string; // the instance id, e.g. clean/lap_sigmoid-02-en; unique within a run
  /** The unit the item belongs to (e.g. a pair): --limit takes whole units, the bootstrap resamples
   *  units. */
  unit?: string;
  /** The request configuration it was built for (absent when the task declares none). */
  configuration?: string;
  messages: { role: Role; content: string }[];
  /** A JSON schema sent as the strict response_format, with its name. */
  schema?: { name: string; schema: Json };
  /** Per-request generation fields; they override the stage's and are part of the request's key. */
  generation?: GenerationFields;
  meta: Record<string, Json>; // subset, group, gold… carried to scoring
}

export type ReplyFormat = "json_schema" | "json_object" | "none" | "builtin";

/** One reply of the model stage (model/replies): what came back for a request, or its final API error. */
export interface ReplyRecord {
  id: string;
  request_sha256: string | null; // the per-request key: route, model and the exact body
  format: ReplyFormat;
  text: string;
  error: string | null; // a final API error: no verdict for this item
  finish_reason: string | null;
  reasoning: boolean; // a reasoning field came back (reasoning, reasoning_content, thinking, …_details)
  think: boolean; // the content held a think tag (<think>, or a bare </think> closing one opened earlier)
  /** The reasoning text when the server returned one in a separate field. */
  reasoning_content?: string | null;
  /** The server's usage object as returned (token counts). */
  usage?: Json | null;
  /** The reasoning tokens usage reports, when the protocol names them otherwise than OpenAI's usage does
   *  (usage.completion_tokens_details.reasoning_tokens is read from usage itself). */
  reasoning_tokens?: number;
  /** The model's refusal text (OpenAI's `refusal` field), when it sent one instead of an answer. */
  refusal?: string;
  /** Tool calls the reply made instead of content (none are offered), when it made any. */
  tool_calls?: number;
  /** The model the reply names (`model`), when it names one: it may differ from the model asked for. */
  served_model?: string;
  /** The server refused this request for good (its context length, a parameter): `error` says so too. */
  request_refused?: { kind: string; status: number; message: string };
}

/** A task parser's reading of one reply. */
export interface ParsedReply {
  ok: boolean;
  value: Json;
  error?: string;
}

/** One row of parse/parsed: the parse of a reply, or why there is none. */
export interface ParsedRecord {
  id: string;
  api_error: string | null;
  parsed: ParsedReply | null;
}

/** One scored item (score/items). */
export interface ItemRecord {
  id: string;
  unit?: string;
  meta: Record<string, Json>;
  parsed: Json;
  verdicts: Record<string, Json>;
}

/** One judge reply (judge/judged): item id, judge, reply text or null for an API error. */
export interface JudgedRecord {
  id: string;
  judge: string;
  text: string | null;
  error?: string | null;
  request_sha256?: string | null;
}

/** One unit's value of the primary metric (bootstrap/units): the rows its interval resampled. */
export interface UnitRecord {
  id: string;
  cluster: string;
  value: number;
}

/** Record types a stage output carries; stage kinds declare them, the spec checker matches them. */
export const RECORD_TYPES = {
  requests: "model requests, one RequestRecord a line after a table of shared parts (docs/records.md)",
  replies: "model replies, one ReplyRecord a line",
  parsed: "parsed replies, one ParsedRecord a line",
  items: "scored items, one ItemRecord a line",
  judged: "judge replies, one JudgedRecord a line",
  metrics: "a score stage's metric rows (MetricRows, PairedRows)",
  tables: "a score stage's tables (JSON)",
  audit: "a model stage's audit (JSON)",
  info: "a prompts stage's selection (JSON)",
  fit: "a fitted baseline: its name, parameters, seed and learned values (JSON)",
  result: "a run's metrics.json",
  units:
    "the primary metric's value per unit (UnitRecord a line): what a paired comparison of two runs reads",
  file: "a file (a release file or a template)",
} as const;
export type RecordType = keyof typeof RECORD_TYPES;

/** The record types that carry model answers. */
export type AnswerType = "replies" | "judged";
export const carriesAnswers = (type: RecordType): type is AnswerType =>
  type === "replies" || type === "judged";

/** Whether a record stands for a request that got no answer (an API error): a failure, never a verdict. */
export function unanswered(type: AnswerType, record: ReplyRecord | JudgedRecord): boolean {
  return type === "replies"
    ? (record as ReplyRecord).error !== null
    : (record as JudgedRecord).text === null;
}

export interface RecordShapes {
  requests: RequestRecord;
  replies: ReplyRecord;
  parsed: ParsedRecord;
  items: ItemRecord;
  judged: JudgedRecord;
  units: UnitRecord;
}

/** A part stored once in a requests file's shared table, by the sha256 of its sorted-key JSON. */
export interface SharedRef {
  $shared: string;
}

/** A request as a requests file stores it: message contents and schemas repeated across records are
 *  references into the file's first line, `{"shared": {sha256: value}}` (docs/records.md). */
export interface StoredRequest extends Omit<RequestRecord, "messages" | "schema"> {
  messages: { role: Role; content: string | SharedRef }[];
  schema?: { name: string; schema: Json } | SharedRef;
}

/** A value stored inline when its JSON is shorter than this: a reference costs about 80 bytes. */
const SHARE_FROM = 128;

const isRef = (value: unknown): value is SharedRef =>
  value !== null && typeof value === "object" && typeof (value as SharedRef).$shared === "string";

/** The request whose body is sent (stages/model.ts requestBody starts from it): its references resolved
 *  from the shared table, each part by the same object for every record (held once in memory). */
export function expandRequest(stored: StoredRequest, shared: ReadonlyMap<string, Json>): RequestRecord {
  const part = (ref: SharedRef): Json => {
    const value = shared.get(ref.$shared);
    if (value === undefined)
      throw new Error(`request ${stored.id}: no shared part ${ref.$shared} in its file`);
    return value;
  };
  const { messages, schema, ...rest } = stored;
  const out: RequestRecord = {
    ...rest,
    messages: messages.map((message) =>
      isRef(message.content)
        ? { ...message, content: part(message.content) as string }
        : (message as { role: Role; content: string }),
    ),
  };
  if (schema !== undefined)
    out.schema = isRef(schema) ? (part(schema) as unknown as RequestRecord["schema"]) : schema;
  return out;
}

/** Each part of the requests (message contents, schemas) to its JSON, and how many times each JSON
 *  occurs. */
function partJsons(rows: readonly RequestRecord[]): {
  jsonOf: Map<unknown, string>;
  byJson: Map<string, number>;
} {
  // Each part's JSON made once per distinct value: strings by value, objects by their members' identity
  // (a task makes a new { name, schema } per request around the same schema object).
  const ids = new WeakMap<object, number>();
  let lastId = 0;
  const idOf = (part: object) => ids.get(part) ?? (ids.set(part, ++lastId), lastId);
  const shallow = (part: object) =>
    Object.entries(part)
      .map(
        ([key, x]) =>
          `${key}\u0000${x !== null && typeof x === "object" ? `#${idOf(x)}` : JSON.stringify(x)}`,
      )
      .join("\u0001");
  const jsonOfString = new Map<string, string>();
  const jsonOfShape = new Map<string, string>(); // objects by their members' identity
  const jsonOf = new Map<unknown, string>(); // each part noted, to its JSON
  const byJson = new Map<string, number>();
  const note = (part: unknown) => {
    let json: string | undefined;
    if (typeof part === "string") {
      json = jsonOfString.get(part);
      if (json === undefined) jsonOfString.set(part, (json = JSON.stringify(part)));
    } else if (part !== null && typeof part === "object") {
      const key = shallow(part);
      json = jsonOfShape.get(key);
      if (json === undefined) jsonOfShape.set(key, (json = sortedJson(part)!));
    } else json = sortedJson(part) ?? "null";
    jsonOf.set(part, json);
    byJson.set(json, (byJson.get(json) ?? 0) + 1);
  };
  for (const row of rows) {
    for (const message of row.messages) note(message.content);
    if (row.schema !== undefined) note(row.schema);
  }
  return { jsonOf, byJson };
}

/** Requests as stored: parts (message contents, schemas) that recur and are not short go to the shared
 *  table once; which parts is a function of the records alone, so equal requests give equal bytes. */
function storeRequests(rows: readonly RequestRecord[], line: (row: unknown) => void): void {
  const { jsonOf, byJson } = partJsons(rows);
  const shared: Record<string, Json> = {};
  const refOf = new Map<string, SharedRef>();
  const ref = (part: unknown): SharedRef | null => {
    const json = jsonOf.get(part)!;
    if (json.length < SHARE_FROM || byJson.get(json)! < 2) return null;
    let sharedRef = refOf.get(json);
    if (!sharedRef) {
      sharedRef = { $shared: sha256Hex(json) };
      refOf.set(json, sharedRef);
      shared[sharedRef.$shared] = JSON.parse(json) as Json;
    }
    return sharedRef;
  };
  // Every reference is made before the table is written: the table is the file's first line.
  for (const row of rows) {
    for (const message of row.messages) ref(message.content);
    if (row.schema !== undefined) ref(row.schema);
  }
  if (refOf.size) line({ shared });
  for (const row of rows) {
    const out: StoredRequest = {
      ...row,
      messages: row.messages.map((message) => ({
        ...message,
        content: ref(message.content) ?? message.content,
      })),
    };
    if (row.schema !== undefined) out.schema = ref(row.schema) ?? row.schema;
    line(out);
  }
}

/** The stored requests of a requests file and its shared table (empty for a file without one). */
export function readStoredRequests(text: string): { shared: Map<string, Json>; stored: StoredRequest[] } {
  const rows = parseJsonLines<StoredRequest | { shared: Record<string, Json> }>(text);
  const head = rows[0];
  const shared = new Map<string, Json>();
  if (head && "shared" in head && !("id" in head)) {
    rows.shift();
    for (const [hash, value] of Object.entries(head.shared)) shared.set(hash, value);
  }
  return { shared, stored: rows as StoredRequest[] };
}

/** Reads a JSON-lines output of a known record type (requests: expanded, see expandRequest). */
export function readRecords<T extends keyof RecordShapes>(type: T, text: string): RecordShapes[T][] {
  if (type === "requests") {
    const { shared, stored } = readStoredRequests(text);
    return stored.map((request) => expandRequest(request, shared)) as RecordShapes[T][];
  }
  return parseJsonLines<RecordShapes[T]>(text);
}

/** Writes records as JSON lines (keys sorted, as every earlier result was written; requests with their
 *  shared parts once, see storeRequests). */
export function writeRecords<T extends keyof RecordShapes>(type: T, rows: RecordShapes[T][]): string {
  if (type !== "requests") return jsonLines(rows);
  const lines: unknown[] = [];
  storeRequests(rows as RequestRecord[], (row) => lines.push(row));
  return jsonLines(lines);
}

/** A stage output written as it is made: the finished temp file and its sha256 (a StageOutput). */
export interface WrittenFile {
  file: string;
  sha256: string;
}

/** Bytes gathered before they are appended to the file (and hashed), and read at a time. Small: a model
 *  stage's replies (800 KB at 2,070 items) were gathered whole at 1 MB, as strings, their join and its
 *  bytes, at the moment the stage's heap is fullest, and each megabyte's buffer, once freed, raised the C
 *  allocator's threshold for memory it hands back: a 2,070-item first build peaked 6 MB higher. */
const FLUSH_AT = 1 << 16;

/** JSON lines (keys sorted) appended to a file while they are hashed, a chunk at a time. */
class JsonLinesFile {
  private readonly hash = createHash("sha256");
  private pending: string[] = [];
  private pendingLength = 0;

  constructor(readonly file: string) {
    writeFileSync(file, "");
  }

  /** `undefined` (a hole in an array of records) is an empty line, as in jsonLines. */
  line(row: unknown): void {
    const line = (row === undefined ? "" : sortedJsonText(row)) + "\n";
    this.pending.push(line);
    this.pendingLength += line.length;
    if (this.pendingLength >= FLUSH_AT) this.flush();
  }

  private flush(): void {
    if (!this.pending.length) return;
    const chunk = Buffer.from(this.pending.join(""), "utf8");
    this.pending = [];
    this.pendingLength = 0;
    this.hash.update(chunk);
    const fd = openSync(this.file, "a"); // opened per chunk: a failing stage leaves no descriptor open
    try {
      for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
    } finally {
      closeSync(fd);
    }
  }

  /** The file made durable (as the store's own writes are), in the form a stage returns a file. */
  close(): WrittenFile {
    this.flush();
    const fd = openSync(this.file, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { file: this.file, sha256: this.hash.digest("hex") };
  }
}

/**
 * Records appended to a file as they are made: the bytes writeRecords would return, without the whole
 * output in memory. A stage that fails leaves its temp file to the runner (ctx.tempPath). Requests are
 * not written this way: their shared table, the first line, needs every record (writeRecordsFile).
 */
export class RecordsWriter<T extends Exclude<keyof RecordShapes, "requests">> extends JsonLinesFile {
  write(row: RecordShapes[T]): void {
    this.line(row);
  }
}

/** Writes records to `file` line by line (requests with their shared table first, see storeRequests). */
export function writeRecordsFile<T extends keyof RecordShapes>(
  type: T,
  rows: Iterable<RecordShapes[T]>,
  file: string,
): WrittenFile {
  const out = new JsonLinesFile(file);
  if (type === "requests") storeRequests([...rows] as RequestRecord[], (row) => out.line(row));
  else for (const row of rows) out.line(row);
  return out.close();
}

/** The non-blank lines of a file, decoded one chunk at a time (a line may span chunks). */
function* fileLines(file: string): Generator<string> {
  const fd = openSync(file, "r");
  try {
    const chunk = Buffer.allocUnsafe(FLUSH_AT);
    const decoder = new StringDecoder("utf8");
    let rest = "";
    for (;;) {
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      const text = bytesRead > 0 ? rest + decoder.write(chunk.subarray(0, bytesRead)) : rest + decoder.end();
      const lines = text.split("\n");
      rest = bytesRead > 0 ? lines.pop()! : "";
      for (const line of lines) if (line.trim() !== "") yield line;
      if (bytesRead === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** The non-blank lines of bytes held in memory (an input without a file: a bundle being verified). */
function* bufferLines(data: Buffer): Generator<string> {
  let start = 0;
  while (start < data.length) {
    let end = data.indexOf(10, start);
    if (end < 0) end = data.length;
    const line = data.toString("utf8", start, end);
    if (line.trim() !== "") yield line;
    start = end + 1;
  }
}

/** Where a stage reads an input's records from: its file in the store, or its bytes when it has none. */
export type RecordsSource = { file: string } | { data: Buffer };

/**
 * The records of a JSON-lines output one line at a time: what readRecords returns, without the whole
 * text or every record in memory (requests: the shared table of the first line, then each record
 * expanded, see expandRequest).
 */
export function* streamRecords<T extends keyof RecordShapes>(
  type: T,
  source: RecordsSource,
): Generator<RecordShapes[T]> {
  const lines = "file" in source ? fileLines(source.file) : bufferLines(source.data);
  if (type !== "requests") {
    for (const line of lines) yield JSON.parse(line) as RecordShapes[T];
    return;
  }
  const shared = new Map<string, Json>();
  let first = true;
  for (const line of lines) {
    const row = JSON.parse(line) as StoredRequest | { shared: Record<string, Json> };
    if (first && "shared" in row && !("id" in row)) {
      for (const [hash, value] of Object.entries(row.shared)) shared.set(hash, value);
      first = false;
      continue;
    }
    first = false;
    yield expandRequest(row as StoredRequest, shared) as RecordShapes[T];
  }
}
