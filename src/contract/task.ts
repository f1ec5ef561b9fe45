// Task contract v2: what a task module offers the generic stages. Tasks know their protocol; they never
// see the cache. Everything a task exchanges with a stage is a record of src/contract/records.ts.
import type { Json } from "../util/json.js";
import type { ParamDecls } from "./declarations.js";
import type {
  GenerationFields,
  ItemRecord,
  ParsedReply,
  RecordType,
  ReplyRecord,
  RequestRecord,
} from "./records.js";

export type { ParsedReply, ReplyRecord, GenerationFields } from "./records.js";
export type TaskRequest = RequestRecord;
export type ItemVerdict = ItemRecord;

export interface ReleaseFiles {
  /** Release path (e.g. benchmark/commands_v0.1.jsonl) -> content as UTF-8 text. */
  text(path: string): string;
  /** The same file as bytes (a binary release file: a database, an archive). */
  bytes(path: string): Buffer;
  /** An on-disk path to read it by streaming (read only; never write it). */
  path(path: string): string;
  has(path: string): boolean;
  list(): string[];
}

/** A named request configuration: a prompt variant plus generation fields (temperature, top_p, …). */
export interface RequestConfiguration {
  /** The prompt variant the task builds requests with (a template input name or a task-defined name). */
  prompt?: string;
  generation: GenerationFields;
  description?: string;
}

export interface PromptsInput {
  release: ReleaseFiles;
  templates: Record<string, string>; // input name -> text
  params: Json;
  /** The configuration this prompts stage instance builds for (a spec expanded over configurations). */
  configuration?: { name: string } & RequestConfiguration;
  /** Something every result of this build must say (e.g. prompts that are a reconstruction): recorded in
   *  metrics.json `notices` and shown after each build. */
  notice?: (message: string) => void;
}

export interface ParseInput {
  /**
   * The whole reply: text, finish_reason, reasoning flags, usage (never an API error: those are no verdict).
   */
  reply: ReplyRecord;
  request: TaskRequest;
  params: Json;
}

/** A judge stage's replies, per judge model: item id -> reply text, or null for an API error. */
export type JudgedReplies = { judge: string; replies: Record<string, string | null> }[];

export interface ScoreInput {
  requests: TaskRequest[];
  /** Per request (same order): its parse, or null when there is no reply or an API error. */
  parsed: (ParsedReply | null)[];
  /** Per request (same order): the whole reply record, or null when none came back. */
  replies: (ReplyRecord | null)[];
  params: Json;
  judged?: JudgedReplies;
}

/** One row for interval estimation: a per-item value (mean statistic) or fields a statistic reads. */
export interface MetricRow {
  id: string;
  value: number;
  /** The unit resampled by the bootstrap (a pair, a command group); rows of a unit are drawn together. */
  cluster: string;
  /** Named per-row numbers a statistic reads (e.g. tp, fp, fn, tn; flagged; both_correct). */
  fields?: Record<string, number>;
}

export interface MetricRows {
  name: string;
  label: string;
  rows: MetricRow[];
  /** `mean` (default): the mean of row values. Otherwise the name of a task statistic over the drawn
   *  rows. */
  statistic?: string;
  /** Where the bootstrap stage puts the row for the summary (e.g. the primary first). */
  primary?: boolean;
  ciFallback?: "clopper-pearson" | "none";
  /** What the values are: a proportion (shown in %) or a score on its own scale. */
  unit?: "proportion" | "score";
}

/** A statistic of resampled rows (F1, precision, MCC, a ratio): null where it is undefined (0/0). */
export type Statistic = (rows: readonly MetricRow[]) => number | null;

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
  /** Counts and tables reported as they are (breakdowns, the original summary rows). `notices`, a list of
   *  sentences, is what every reader of the run must know beside its numbers (replies read by a rule of
   *  medbench's own choice): shown after each build, under the run by `check` and in the report. */
  tables: Record<string, Json>;
}

export interface BaselineInput {
  release: ReleaseFiles;
  requests: TaskRequest[];
  /** The baseline's parameters (declared in `Baseline.params`, set by the model stage's `baseline`
   *  param). */
  params: Json;
  seed: number;
  /** A learning baseline's fitted model, as its fit stage recorded it. */
  fitted?: Json;
}

export interface FitInput {
  release: ReleaseFiles;
  params: Json;
  seed: number;
}

/** A built-in model (route `medbench`). A baseline with `fit` is trained in a `fit` stage, once. */
export interface Baseline {
  params?: ParamDecls;
  fit?(input: FitInput): Json;
  reply(input: BaselineInput): string[];
}

/**
 * Two runs of a task compared item by item (`medbench compare A B`). A task without one is compared on its
 * primary metric unit by unit (units.jsonl).
 */
export interface CompareDecl {
  /** Item verdict names compared (as ItemVerdict.verdicts keys), with labels; the first is the headline. */
  verdicts: { name: string; label: string }[];
  /** The item meta field that clusters items for the paired bootstrap (e.g. group); default the unit. */
  cluster?: string;
  /** The item meta field whose values are the rows (e.g. subset); default one row of every item. */
  by?: string;
  /** A verdict that, true on either side, leaves the item out of both (e.g. api_error). */
  leaveOut?: string;
  /** The paired bootstrap (default 2,000 resamples, numpy default_rng(0)). */
  paired?: { resamples: number; seed: number; rng: "numpy" | "python" };
}

export interface TaskModule {
  /** The contract version this task is written against. */
  contract: 2;
  /**
   * Which module of the task folder holds each function a stage calls (docs/tasks.md, "Parts"), so that a
   * stage's key holds only the code that function reaches. Undeclared, a part is keyed on the whole folder.
   */
  parts?: TaskParts;
  /**
   * The environment variables the task's code reads (`process.env.NAME`, by literal name): each is in the
   * key of every stage that calls the task's code, by name and the sha256 of its value. A read of any other
   * is refused when the task loads (docs/tasks.md, "What task code may read").
   */
  environment?: readonly string[];
  buildRequests(input: PromptsInput): TaskRequest[];
  parseReply(input: ParseInput): ParsedReply;
  score(input: ScoreInput): ScoreOutput;
  /** For a judge stage: one judge request per item that has a parsed reply (id = the item's id). */
  judgeRequests?(input: {
    requests: TaskRequest[];
    parsed: (ParsedReply | null)[];
    templates: Record<string, string>;
    params: Json;
  }): TaskRequest[];
  /** The parameters the task reads, with their types, per stage kind that passes its params on. */
  params?: Partial<Record<"prompts" | "parse" | "score" | "judge", ParamDecls>>;
  /** Named request configurations; the prompts stage builds the ones its `configurations` parameter names
   *  (default: the headline), each request carrying its configuration's name and generation fields. */
  configurations?: Record<string, RequestConfiguration>;
  /** The subsets its requests belong to (meta.subset), so that `--subset` is checked with the spec. */
  subsets?: readonly string[];
  /** The configuration built when none is chosen. */
  headline?: string;
  /** Metric statistics by name (MetricRows.statistic). `mean` is built in. */
  statistics?: Record<string, Statistic>;
  /** Built-in models (route `medbench`). */
  baselines: Record<string, Baseline>;
  compare?: CompareDecl;
  /**
   * The release holds private text that some stage outputs carry (requests, a fitted model): a bundle
   * withholds every output of these record types, and verify replays the score from items and replies.
   */
  privateRelease?: { why: string; withhold: RecordType[] };
  /**
   * Scores again from a run's own items and replies, without its requests (what verify replays for a
   * private release). What cannot be recomputed without the requests is taken from the items.
   */
  rescore?(input: RescoreInput): ScoreOutput;
}

/**
 * A task's parts: per part, the module (a source file of the task folder, e.g. `parser.ts`) that exports the
 * value the task object holds for it, unchanged. The runner checks that it does, and keys each stage on the
 * modules its parts reach (following their imports), never on the wiring module (index.ts).
 */
export interface TaskParts {
  /** Exports `buildRequests` (the prompts stage). */
  prompts?: string;
  /** Exports `parseReply` (the parse stage). */
  parse?: string;
  /** Exports `score`, and `rescore` when the task has one (the score stage, verify's replay). */
  score?: string;
  /** Exports the `statistics` record (the bootstrap stage). */
  statistics?: string;
  /** Exports `judgeRequests` (the judge stage). */
  judge?: string;
  /** Per built-in model name, or one for all: exports its `reply` and `fit` (the model and fit stages). */
  baselines?: string | Record<string, string>;
}

export interface RescoreInput {
  items: ItemRecord[];
  /** Per item (same order): its reply record, or null when none came back; null when the bundle withholds
   *  the replies too (then the items' verdicts stand as recorded). */
  replies: (ReplyRecord | null)[] | null;
  params: Json;
}

/** A part a stage calls: one of TaskParts, or the built-in model NAME (`baseline NAME`). */
export type TaskPart = Exclude<keyof TaskParts, "baselines"> | `baseline ${string}`;
