// medbench check: a task's check over its roster of runs, from the results folders alone.
import type { SpecFile } from "../spec/load.js";
import { evaluate, type CriterionResult, type Status } from "./criteria.js";
import type { CheckDecl } from "./declare.js";
import { rosterRuns, type RosterRun } from "./roster.js";
import { findRuns, readUnits } from "./runs.js";
import type { UnitRecord } from "../contract/records.js";
import { scorerNotices } from "../util/metrics.js";

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
    /** What the run's task says of it beside the numbers (scorerNotices). */
    notices: string[];
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
  const apiLimits = check.criteria.flatMap((c) =>
    c.kind === "failure_rates" && c.apiErrors ? [c.apiErrors.incompleteAt] : [],
  );
  const { runs, inputs } = rosterRuns(spec, check, found, {
    headline,
    apiIncompleteAt: apiLimits.length ? Math.min(...apiLimits) : null,
    registries,
  });
  const byRole = new Map(runs.map((r) => [r.role, r]));
  const units = new Map<string, UnitRecord[] | string>();
  const criteria = check.criteria.map((c) =>
    evaluate(c, {
      run: (role) => byRole.get(role)!,
      all: runs,
      units: (r) => {
        if (!units.has(r.role)) units.set(r.role, unitsOf(root, r, check));
        return units.get(r.role)!;
      },
    }),
  );
  const status: Status = criteria.some((c) => c.status === "fail")
    ? "fail"
    : criteria.some((c) => c.status === "incomplete") || runs.some((r) => r.status !== "ok")
      ? "incomplete"
      : "pass";
  const missing = runs
    .filter((r) => r.status !== "ok")
    .map((r) => ({ role: r.role, model: r.model, reason: r.reason! }));
  const reasons = [
    ...criteria.filter((c) => c.status !== "pass").map((c) => `${c.id} ${c.status}: ${c.summary}`),
    ...missing.map((m) => `${m.role} (${m.model}) ${m.reason}`),
  ];
  return {
    spec: spec.path,
    slug: spec.slug,
    spec_hash: spec.specHash,
    metric: check.metric,
    status,
    inputs,
    runs: runs.map((r) => ({
      role: r.role,
      model: r.model,
      status: r.status,
      reason: r.reason,
      dir: r.dir,
      tags: r.runTags,
      value: r.interval?.value ?? null,
      lo: r.interval?.lo ?? null,
      hi: r.interval?.hi ?? null,
      api_errors: r.apiErrorRate,
      notices: r.metrics ? scorerNotices(r.metrics) : [],
    })),
    missing,
    broken: found.filter((f) => f.broken).map((f) => ({ dir: f.dir, why: f.broken! })),
    modified: found.filter((f) => f.modified).map((f) => ({ dir: f.dir, why: f.modified! })),
    criteria,
    reasons,
  };
}

/** The run's per-unit values, checked to be the metric's own: their mean is the point estimate. */
function unitsOf(root: string, r: RosterRun, check: CheckDecl): UnitRecord[] | string {
  const rows = readUnits(root, r.dir!, check.units);
  if (typeof rows === "string") return rows;
  const mean = rows.reduce((s, x) => s + x.value, 0) / rows.length;
  const value = r.interval!.value;
  if (!rows.length || value === null || Math.abs(mean - value) > 1e-12)
    return (
      `${r.dir}/${check.units}: the mean of its ${rows.length} values is ${mean}, ` +
      `not the ${check.metric} of ` +
      `metrics.json (${value}): a paired comparison of this metric is not defined by its units`
    );
  return rows;
}
