// The shapes verify's checks share: a check's line in the report, the report itself, the options it runs
// with, and what a replay runs from.
import type { Project } from "../../runner/project/project.js";
import type { Emit } from "../../contract/events.js";
import type { SpecFile } from "../../specfile/load.js";
import type { TaskModule } from "../../../tasks/task.js";
import type { BundleManifest } from "../layout.js";

export interface Check {
  name: string;
  ok: boolean | null;
  lines: string[];
} // null: not checked
export interface Difference {
  what: string;
  published: unknown;
  recomputed: unknown;
}
export interface LiveReport {
  request_differences: { stage: string; path: string; recorded: unknown; sent: unknown }[];
  /** What the verdicts below compare: the task's `compare` declaration, or every boolean verdict in one
   *  group when it declares none (`declared: false`). The first verdict is the headline. */
  compare: {
    declared: boolean;
    by: string | null;
    leave_out: string | null;
    headline: string | null;
    verdicts: { name: string; label: string }[];
  };
  /** Per compared verdict and group (a value of `compare.by`, or "all"): published against live. */
  verdicts: {
    key: string;
    group: string;
    n: number;
    changed: number;
    to_true: number;
    to_false: number;
    items: string[];
  }[];
  /** Per model stage sent live: its requests that got no answer (left out of the verdicts above). */
  failures: { stage: string; failed: number; total: number; ids: string[] }[];
  /** Why the live run is not whole (requests that failed, a stage that stopped), or null when it is. */
  incomplete: string | null;
  /** Live replies taken from the shared remote instead of sent from here, by the machine that wrote them
   *  (its object metadata): anyone who can write the bucket could have planted one
   *  (docs/remote-cache.md). */
  from_remote: { remote: string; writers: { writer: string; replies: number; items: string[] }[] } | null;
  metrics: {
    metric: string;
    published: number | null;
    lo: number | null;
    hi: number | null;
    live: number | null;
    inside: boolean | null;
  }[];
}
export interface VerifyReport {
  bundle: string;
  slug: string;
  spec_hash: string;
  checks: Check[];
  differences: Difference[];
  /** Per replayed stage whose code differs: how this medbench's (which the replay ran) differs from the
   *  code its record in the bundle names (files as their sources, packages with both versions). */
  code_differences: { stage: string; changes: string[] }[];
  live: LiveReport | null;
  ok: boolean;
}

export interface VerifyOptions {
  project: Project;
  dataDir?: string;
  live: boolean;
  /** Whether a bundle's own task code (task_files) may be compiled and run here. */
  runTaskCode?: boolean;
  registryFiles: string[];
  env: Record<string, string | undefined>;
  /** Where the live run's progress and warnings go (the replay itself says nothing). */
  emit?: Emit;
  /** Set by verifyBundle: the folder a replayed stage writes its temp files in, removed at the end
   *  whatever happens (never the project's cache/tmp). */
  scratch?: string;
}

/** What a live run did beyond its outputs: failed requests per model stage, a stage that stopped. */
export interface LiveRun {
  failures: LiveReport["failures"];
  stopped: string | null;
  /** Request key -> item id, for every live request of the model stages. */
  items: Map<string, string>;
}

/** Stage -> output name -> bytes. */
export type Outputs = Map<string, Map<string, Buffer>>;

/** What a replay runs from: the unpacked bundle, its spec and task, its outputs, what it withholds. */
export interface Replay {
  dir: string;
  spec: SpecFile;
  task: TaskModule;
  manifest: BundleManifest;
  published: Outputs;
  options: VerifyOptions;
  withheld: readonly string[];
}

/** The outputs a replay produced, which stages it ran, and which it took from the bundle and why. */
export type Recomputed = Outputs & {
  ran: Set<string>;
  notReplayed: Map<string, string>;
  /** Replayed from their own bundled outputs (a score from its items): what those hold is taken as it is. */
  rescored: Set<string>;
};

/** The name a stage output is published under (its results file), or `stage/output`. */
export type ResultName = (stage: string, output: string) => string;
