// What the runner reports; loggers render it. The runner itself never prints.

export type StageStatus = "ran" | "fresh";

export type BuildEvent =
  | { type: "build-start"; spec: string; specHash: string; stages: number }
  /** `reasons`: why it runs, against the last build of these variables (as status words them). */
  | { type: "stage-start"; stage: string; kind: string; key: string; reasons?: string[] }
  | { type: "stage-done"; stage: string; kind: string; key: string; status: StageStatus; ms: number }
  | { type: "stage-failed"; stage: string; kind: string; message: string }
  | {
      type: "progress";
      stage: string;
      done: number;
      total: number;
      retries: number;
      errors: number;
      /** Since the stage began sending (a model stage): the last event's is the sending's whole time. */
      ms?: number;
      /** On the event a stage emits as its first request goes out (`done`: the items answered before it,
       *  from stored replies); absent when every reply was stored. */
      sending?: true;
    }
  | { type: "warning"; stage?: string; message: string }
  /** What a result says of its provenance (metrics.json `notices`: a synthetic sample, reconstructed
   *  prompts), shown after every build; not a fault, so not a warning. */
  | { type: "notice"; message: string }
  | { type: "info"; stage?: string; message: string }
  | {
      type: "build-done";
      specHash: string;
      results: string | null;
      summary: SummaryRow[];
      lockChanged: boolean;
    };

export interface SummaryRow {
  metric: string;
  value: number | null;
  lo: number | null;
  hi: number | null;
  n: number;
  method: string;
  unit: "proportion" | "score";
}

export type Emit = (e: BuildEvent) => void;
