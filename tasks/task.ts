// What a task module offers the generic stages. Tasks know their protocol; they never see the cache.
import type { Json } from "../src/util/json.js";

export interface ReleaseFiles {
  /** Release path (e.g. benchmark/commands_v0.1.jsonl) -> content. */
  text(path: string): string;
  has(path: string): boolean;
  list(): string[];
}

/** One model request of a task, before any route's fields are applied. */
export interface TaskRequest {
  id: string; // the instance id, e.g. clean/lap_sigmoid-02-en
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  /** A JSON schema sent as the strict response_format, with its name. */
  schema?: { name: string; schema: Json };
  meta: Record<string, Json>; // subset, group, gold… carried to scoring
}

export interface PromptsInput {
  release: ReleaseFiles;
  templates: Record<string, string>; // input name -> text
  params: Json;
}

export interface ParsedReply {
  ok: boolean;
  value: Json;
  error?: string;
}

export interface ItemVerdict {
  id: string;
  meta: Record<string, Json>;
  parsed: Json;
  verdicts: Record<string, Json>;
}

/** A metric's rows for interval estimation: one value per row, clustered by `cluster`. */
export interface MetricRows {
  name: string;
  label: string;
  rows: { id: string; value: number; cluster: string }[];
  /** Where the bootstrap stage puts the row for the summary (e.g. the primary first). */
  primary?: boolean;
  ciFallback?: "clopper-pearson" | "none";
  /** What the values are: a proportion (shown in %) or a score on its own scale. */
  unit?: "proportion" | "score";
}

export interface PairedRows {
  name: string;
  label: string;
  a: { id: string; value: number; cluster: string }[];
  b: { id: string; value: number; cluster: string }[];
}

export interface ScoreOutput {
  items: ItemVerdict[];
  metrics: MetricRows[];
  paired: PairedRows[];
  /** Counts and tables reported as they are (breakdowns, the original summary rows). */
  tables: Record<string, Json>;
}

export interface BaselineInput {
  release: ReleaseFiles;
  requests: TaskRequest[];
}

export interface TaskModule {
  /** The module file behind each stage kind that calls the task (relative to tasks/<name>/). */
  parts: { prompts: string; parse: string; score: string; baselines: string; judge?: string };
  buildRequests(input: PromptsInput): TaskRequest[];
  parseReply(text: string, request: TaskRequest, params: Json): ParsedReply;
  score(
    requests: TaskRequest[],
    parsed: (ParsedReply | null)[],
    params: Json,
    judged?: JudgedReplies,
  ): ScoreOutput;
  /** For a judge stage: one judge request per item that has a parsed reply (id = the item's id). */
  judgeRequests?(
    requests: TaskRequest[],
    parsed: (ParsedReply | null)[],
    templates: Record<string, string>,
    params: Json,
  ): TaskRequest[];
  /** The parameters the task reads, per stage kind that passes its params on (prompts, parse, score). */
  params?: Partial<Record<"prompts" | "parse" | "score", readonly string[]>>;
  /** Built-in models (route `medbench`): reply text per request. */
  baselines: Record<string, (input: BaselineInput) => string[]>;
}

/** A judge stage's replies, per judge model: item id -> reply text, or null for an API error. */
export type JudgedReplies = { judge: string; replies: Record<string, string | null> }[];
