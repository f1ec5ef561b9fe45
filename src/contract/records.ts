// The records that flow between stages, and the one place that reads and writes them (JSON lines).
// Stage kinds and tasks exchange only these shapes; a new field is added here, once.
import { jsonLines, parseJsonLines, type Json } from "../util/json.js";

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
  /** The unit the item belongs to (e.g. a pair): --limit takes whole units, the bootstrap resamples units. */
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
  reasoning: boolean; // a reasoning / reasoning_content field was returned
  think: boolean; // the content held a <think> block
  /** The reasoning text when the server returned one in a separate field. */
  reasoning_content?: string | null;
  /** The server's usage object as returned (token counts). */
  usage?: Json | null;
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
  requests: "model requests, one RequestRecord a line",
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

interface RecordShapes {
  requests: RequestRecord;
  replies: ReplyRecord;
  parsed: ParsedRecord;
  items: ItemRecord;
  judged: JudgedRecord;
  units: UnitRecord;
}

/** Reads a JSON-lines output of a known record type. */
export function readRecords<T extends keyof RecordShapes>(_type: T, text: string): RecordShapes[T][] {
  return parseJsonLines<RecordShapes[T]>(text);
}

/** Writes records as JSON lines (keys sorted, as every earlier result was written). */
export function writeRecords<T extends keyof RecordShapes>(_type: T, rows: RecordShapes[T][]): string {
  return jsonLines(rows);
}
