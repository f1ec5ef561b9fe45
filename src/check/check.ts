// medbench check: a task's check over its roster of runs, from the results folders alone.
import type { SpecFile } from "../specfile/load.js";
import { evaluate, type CriterionResult, type Status } from "./criteria.js";
import type { CheckDecl } from "./declare.js";
import { rosterRuns, type RosterRun } from "./roster.js";
import { findRuns, readUnits, setAside } from "./runs.js";
import type { UnitRecord } from "../contract/records.js";
import { deviationLine, runDeviations, scorerNotices, type Deviation } from "../util/metrics.js";

export interface CheckReport {
  spec: string;
  slug: string;
  spec_hash: string;
  metric: string;
  status: Status;
  /** Which files the runs were built from: the release, the bundled (synthetic) sample, or none yet. */
  inputs: "release" | "sample" | null;
  runs: {
    role: string;
    model: string;
    status: RosterRun["status"];
    reason: string | null;
    dir: string | null;
    tags: string[];
    value: number | null;
    lo: number | null;
    hi: number | null;
    api_errors: number | null;
    /** How the run deviated from the spec (metrics.json deviations), then what its task says of it beside
     *  the numbers (scorerNotices). */
    notices: string[];
    deviations: Deviation[];
  }[];
  /** The roster runs that are missing or incomplete, with the reason and the command that makes them. */
  missing: { role: string; model: string; reason: string }[];
  /** Results folders of the task whose metrics.json cannot be read. */
  broken: { dir: string; why: string }[];
  /** Results folders of the task whose files are not what their build wrote: never counted. */
  modified: { dir: string; why: string }[];
  criteria: CriterionResult[];
  reasons: string[];
}

export async function runCheck(
  spec: SpecFile,
  check: CheckDecl,
  root: string,
  headline: string | null,
  registries: string[] = [],
): Promise<CheckReport> {
  const found = await findRuns(root, spec.slug);
  const apiLimits = check.criteria.flatMap((criterion) =>
    criterion.kind === "failure_rates" && criterion.apiErrors ? [criterion.apiErrors.incompleteAt] : [],
  );
  const { runs, inputs } = rosterRuns(spec, check, found, {
    headline,
    apiIncompleteAt: apiLimits.length ? Math.min(...apiLimits) : null,
    registries,
  });
  const byRole = new Map(runs.map((run) => [run.role, run]));
  const units = new Map<string, UnitRecord[] | string>();
  const criteria = check.criteria.map((criterion) =>
    evaluate(criterion, {
      run: (role) => byRole.get(role)!,
      all: runs,
      units: (run) => {
        if (!units.has(run.role)) units.set(run.role, unitsOf(root, run, check));
        return units.get(run.role)!;
      },
    }),
  );
  const status = overallStatus(criteria, runs);
  const missing = runs
    .filter((run) => run.status !== "ok")
    .map((run) => ({ role: run.role, model: run.model, reason: run.reason! }));
  const reasons = [
    ...criteria
      .filter((criterion) => criterion.status !== "pass")
      .map((criterion) => `${criterion.id} ${criterion.status}: ${criterion.summary}`),
    ...missing.map((absent) => `${absent.role} (${absent.model}) ${absent.reason}`),
  ];
  return {
    spec: spec.path,
    slug: spec.slug,
    spec_hash: spec.specHash,
    metric: check.metric,
    status,
    inputs,
    runs: runs.map(reportedRun),
    missing,
    ...setAside(found),
    criteria,
    reasons,
  };
}

/** Fail when a criterion fails; incomplete when one is, or a roster run is not usable; else pass. */
function overallStatus(criteria: CriterionResult[], runs: RosterRun[]): Status {
  if (criteria.some((criterion) => criterion.status === "fail")) return "fail";
  const incomplete =
    criteria.some((criterion) => criterion.status === "incomplete") ||
    runs.some((run) => run.status !== "ok");
  return incomplete ? "incomplete" : "pass";
}

/** A roster run as the report lists it. */
function reportedRun(run: RosterRun) {
  return {
    role: run.role,
    model: run.model,
    status: run.status,
    reason: run.reason,
    dir: run.dir,
    tags: run.runTags,
    value: run.interval?.value ?? null,
    lo: run.interval?.lo ?? null,
    hi: run.interval?.hi ?? null,
    api_errors: run.apiErrorRate,
    notices: run.metrics
      ? [...runDeviations(run.metrics).map(deviationLine), ...scorerNotices(run.metrics)]
      : [],
    deviations: run.metrics ? runDeviations(run.metrics) : [],
  };
}

/** The run's per-unit values, checked to be the metric's own: their mean is the point estimate. */
function unitsOf(root: string, run: RosterRun, check: CheckDecl): UnitRecord[] | string {
  const rows = readUnits(root, run.dir!, check.units);
  if (typeof rows === "string") return rows;
  const mean = rows.reduce((sum, x) => sum + x.value, 0) / rows.length;
  const value = run.interval!.value;
  if (!rows.length || value === null || Math.abs(mean - value) > 1e-12)
    return (
      `${run.dir}/${check.units}: the mean of its ${rows.length} values is ${mean}, ` +
      `not the ${check.metric} of ` +
      `metrics.json (${value}): a paired comparison of this metric is not defined by its units`
    );
  return rows;
}
