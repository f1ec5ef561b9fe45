// The results folders of a task (results/<slug>/…/metrics.json) and what a check or a leaderboard needs of
// each run: its model, interval, failure rates and tags. A folder whose metrics.json cannot be read is
// listed as broken, never skipped in silence; one whose files are not what its build wrote is listed as
// modified since build, and its numbers are never used.
import { existsSync, readFileSync } from "../util/builtins.js";
import { UsageError } from "../errors.js";
import { metricsProblem, readResultJson } from "./result-files.js";
import { dirname, join } from "node:path";
import { glob } from "tinyglobby";
import { readRecords, type UnitRecord } from "../contract/records.js";
import type { Json } from "../util/json.js";
import type { CheckDecl } from "./declare.js";
import { modifiedSinceBuild } from "../runner/results/results-check.js";
import { runDeviations, type Deviation } from "../util/metrics.js";

export interface MetricsJson {
  model?: string | null;
  spec_hash?: string;
  partial?: boolean;
  primary?: string | null;
  configuration?: string;
  inputs?: Record<string, string>;
  selection?: { items?: number } | null;
  /** The requests metrics.api_errors and metrics.truncated are counted over. */
  requests?: number;
  metrics?: Record<string, Json>;
  [key: string]: Json | undefined;
}

export interface FoundRun {
  dir: string; // relative to the project
  metrics: MetricsJson | null;
  /** Why metrics.json could not be used, when it could not. */
  broken: string | null;
  /** Why the folder is not what its build wrote (src/runner/results/results-check.ts); `metrics` is then
   * null. */
  modified: string | null;
  /** The model a modified run's metrics.json names: to say which roster run it would be, never more. */
  claimedModel?: string | null;
}

/** The folders set aside: those whose metrics.json is unusable, and those edited since their build. */
export function setAside(found: FoundRun[]) {
  return {
    broken: found.filter((run) => run.broken).map((run) => ({ dir: run.dir, why: run.broken! })),
    modified: found.filter((run) => run.modified).map((run) => ({ dir: run.dir, why: run.modified! })),
  };
}

/**
 * Every results folder of the task, sorted; one whose metrics.json is no run's result with the reason. With
 * `refuseInvalid`, a metrics.json that is not JSON is a refusal naming it (report), else listed (check).
 */
export async function findRuns(
  root: string,
  slug: string,
  options: { refuseInvalid?: boolean } = {},
): Promise<FoundRun[]> {
  const files = (await glob([`results/${slug}/**/metrics.json`], { cwd: root })).sort();
  return files.map((file) => {
    const dir = dirname(file);
    let metrics: unknown;
    try {
      metrics = readResultJson(join(root, file), file);
    } catch (e) {
      if (options.refuseInvalid || !(e instanceof UsageError)) throw e;
      return { dir, metrics: null, broken: e.message, modified: null };
    }
    const problem = metricsProblem(metrics);
    if (problem) return { dir, metrics: null, broken: problem, modified: null };
    // A run's numbers count only as its build wrote them: every results file is checked, not only metrics.
    const modified = modifiedSinceBuild(join(root, dir), join(root, "cache"));
    if (modified.length)
      return {
        dir,
        metrics: null,
        broken: null,
        modified: modified.join("; "),
        claimedModel: (metrics as MetricsJson).model ?? null,
      };
    return { dir, metrics: metrics as MetricsJson, broken: null, modified: null };
  });
}

export interface Interval {
  value: number | null;
  lo: number | null;
  hi: number | null;
  n: number | null;
}

export function intervalOf(metrics: MetricsJson, metric: string): Interval | null {
  const e = metrics.metrics?.[metric] as
    | { value?: number; lo?: number; hi?: number; n?: number }
    | undefined;
  if (!e || typeof e !== "object" || !("value" in e)) return null;
  return { value: e.value ?? null, lo: e.lo ?? null, hi: e.hi ?? null, n: e.n ?? null };
}

/** API errors as a share of the requests they are counted over (the headline's, with several
 *  configurations; `requests`), or of the requests selected for a run that records no `requests`. */
export function apiErrorRate(metrics: MetricsJson): number | null {
  const errors = metrics.metrics?.api_errors;
  const items = typeof metrics.requests === "number" ? metrics.requests : metrics.selection?.items;
  if (typeof errors !== "number" || typeof items !== "number" || items === 0) return null;
  return errors / items;
}

/** The run's deviations that apply to what the check reads of it: its headline configuration's, when its
 *  deviations name configurations (a --configurations all run). */
export function headlineDeviations(metrics: MetricsJson): Deviation[] {
  const headline = metrics.configuration;
  return runDeviations(metrics).filter(
    (x) => !x.configurations || typeof headline !== "string" || x.configurations.includes(headline),
  );
}

/** Built from a bundled sample rather than the release, as the build recorded it (`synthetic_sample`). */
export const onSample = (metrics: MetricsJson): boolean => typeof metrics.synthetic_sample === "string";

/** The tag of a run whose model was fine-tuned on the task's own data (metrics.json `trained_on`). */
export const FINE_TUNED = "fine-tuned";

/**
 * A run's tags: the roster's for its model, the tag rules that match its name, `synthetic-sample` when it
 * was built from a bundled sample, `fine-tuned` when its build said the model was trained on the task's
 * data, `reasoning-on` when its thinking audit does not hold, and `deviating` when its requests differed
 * from the spec by its route's rules (metrics.json deviations).
 */
export function tagsOf(check: CheckDecl | null, metrics: MetricsJson): string[] {
  const tags = new Set<string>();
  const model = String(metrics.model ?? "");
  for (const tag of check?.roster.find((entry) => entry.model === model)?.tags ?? []) tags.add(tag);
  for (const rule of check?.tags ?? []) if (rule.models.test(model)) tags.add(rule.tag);
  if (onSample(metrics)) tags.add("synthetic-sample");
  if (typeof metrics.trained_on === "string") tags.add(FINE_TUNED);
  const audit = metrics.metrics?.thinking_audit as { thinking_off?: boolean } | null | undefined;
  if (audit && audit.thinking_off === false) tags.add("reasoning-on");
  if (runDeviations(metrics).length) tags.add("deviating");
  return [...tags].sort();
}

/** The per-unit values a paired comparison reads, or why they cannot be had. */
export function readUnits(root: string, dir: string, file: string): UnitRecord[] | string {
  const path = join(root, dir, file);
  if (!existsSync(path))
    return (
      `${dir}/${file} is missing: add \`${file}: bootstrap/units\` to the spec's results.files ` +
      "and rebuild"
    );
  try {
    return readRecords("units", readFileSync(path, "utf8"));
  } catch (e) {
    return `${dir}/${file} cannot be read (${(e as Error).message}): rebuild the run`;
  }
}
