// Each criterion kind over the roster's runs: pass, fail, or incomplete (a run it needs is missing or has
// too many API errors), always with the numbers it was decided on. Paired statistics use the same code as
// `medbench stats paired` (src/stats/intervals.ts).
import { pairedComparison } from "../stats/intervals.js";
import { lookupPointer } from "../specfile/load.js";
import { stableJson, type Json } from "../util/json.js";
import type { Criterion } from "./declare.js";
import type { RosterRun } from "./roster.js";
import type { UnitRecord } from "../contract/records.js";
import type { Deviation } from "../util/metrics.js";
import { headlineDeviations } from "./runs.js";

export type Status = "pass" | "fail" | "incomplete";

export interface CriterionResult {
  id: string;
  kind: Criterion["kind"];
  description: string | null;
  status: Status;
  /** One line a reader can check: what was compared with what. */
  summary: string;
  numbers: Record<string, Json>;
}

export interface CriterionContext {
  run(role: string): RosterRun;
  all: RosterRun[];
  units(run: RosterRun): UnitRecord[] | string;
}

/** A share as the check prints it (one decimal, "–" for none). */
export const pct = (x: number | null) => (x === null ? "–" : `${(100 * x).toFixed(1)}%`);
const ci = (run: RosterRun) =>
  `${pct(run.interval!.value)} [${pct(run.interval!.lo)}, ${pct(run.interval!.hi)}]`;
const point = (run: RosterRun) => ({
  model: run.model,
  value: run.interval?.value ?? null,
  lo: run.interval?.lo ?? null,
  hi: run.interval?.hi ?? null,
});

/** The runs a criterion needs that cannot be used, as its incomplete result (or null when all can). */
function unusable(criterion: Criterion, runs: RosterRun[]): CriterionResult | null {
  const bad = runs.filter((run) => run.status !== "ok");
  if (!bad.length) return null;
  return {
    id: criterion.id,
    kind: criterion.kind,
    description: criterion.description,
    status: "incomplete",
    // Why each run cannot be used, and the build that makes one, is said once, in the roster: a reason
    // repeated under every criterion that needs the run buried the verdict (the JSON keeps it per run).
    summary:
      "no usable run of " + bad.map((run) => `${run.role} (${run.status})`).join("; ") + ": see the roster",
    numbers: { unusable: bad.map((run) => run.role) },
  };
}

const result = (criterion: Criterion, pass: boolean, summary: string, numbers: Record<string, Json>) => ({
  id: criterion.id,
  kind: criterion.kind,
  description: criterion.description,
  status: (pass ? "pass" : "fail") as Status,
  summary,
  numbers,
});

/** A criterion over the roster: incomplete when a run it reads deviates from the spec where it refuses
 *  that (refuse_deviations); otherwise its verdict, saying which runs it read deviated, and how. */
export function evaluate(criterion: Criterion, ctx: CriterionContext): CriterionResult {
  const runs = runsOf(criterion, ctx).filter((run) => run.status === "ok");
  const refused = refusedRuns(criterion, runs);
  if (refused) return refused;
  return withDeviations(evaluateKind(criterion, ctx), runs);
}

function evaluateKind(criterion: Criterion, ctx: CriterionContext): CriterionResult {
  switch (criterion.kind) {
    case "interval_above":
    case "interval_covers": {
      const runs = criterion.runs.map(ctx.run);
      const missing = unusable(criterion, runs);
      if (missing) return missing;
      const holds = (run: RosterRun) => {
        const { lo, hi } = run.interval!;
        if (lo === null || hi === null) return false;
        return criterion.kind === "interval_above"
          ? lo > criterion.value
          : lo <= criterion.value && criterion.value <= hi;
      };
      const [yes, no] =
        criterion.kind === "interval_above"
          ? ["lies above", "does not lie above"]
          : ["covers", "does not cover"];
      const summary = runs
        .map((run) => `${run.role} ${ci(run)} ${holds(run) ? yes : no} ${pct(criterion.value)}`)
        .join("; ");
      return result(criterion, runs.every(holds), summary, {
        value: criterion.value,
        runs: Object.fromEntries(runs.map((run) => [run.role, { ...point(run), holds: holds(run) }])),
      });
    }
    case "intervals_apart":
      return apart(criterion, ctx);
    case "headroom":
      return headroom(criterion, ctx);
    case "failure_rates":
      return failureRates(criterion, ctx);
    case "audit":
      return audit(criterion, ctx);
  }
}

function apart(
  criterion: Extract<Criterion, { kind: "intervals_apart" }>,
  ctx: CriterionContext,
): CriterionResult {
  const above = ctx.run(criterion.above),
    below = ctx.run(criterion.below);
  const missing = unusable(criterion, [above, below]);
  if (missing) return missing;
  const aboveCi = above.interval!,
    belowCi = below.interval!;
  const holds = aboveCi.lo !== null && belowCi.hi !== null && aboveCi.lo > belowCi.hi;
  const ua = ctx.units(above),
    ub = ctx.units(below);
  let paired: Json = null;
  let note = "";
  if (typeof ua === "string" || typeof ub === "string")
    note = `; paired: ${[ua, ub].find((units) => typeof units === "string")}`;
  else {
    try {
      const comparison = pairedComparison(ua, ub, criterion.paired);
      paired = { ...comparison } as unknown as Json;
      note =
        `; paired difference ${comparison.diff_pp.toFixed(1)} pp ` +
        `[${comparison.lo.toFixed(1)}, ${comparison.hi.toFixed(1)}], ` +
        `McNemar p ${comparison.mcnemar_p.toPrecision(3)} ` +
        `(${comparison.resamples} resamples, ${comparison.rng} seed ${comparison.seed})`;
    } catch (e) {
      note = `; paired: ${(e as Error).message}`;
    }
  }
  const summary =
    `${criterion.above} ${ci(above)} ${holds ? "lies above" : "does not lie above"} ` +
    `${criterion.below} ${ci(below)}` +
    note;
  return {
    ...result(criterion, holds, summary, { above: point(above), below: point(below), paired }),
    // Without the paired comparison the criterion is not what the document asks for.
    ...(paired === null ? { status: "incomplete" as Status } : {}),
  };
}

type HeadroomCriterion = Extract<Criterion, { kind: "headroom" }>;

/** The run with the highest point estimate (the first of equals); null for no runs. */
const bestOf = (runs: RosterRun[]) =>
  runs.reduce<RosterRun | null>(
    (leader, run) => (leader === null || run.interval!.value! > leader.interval!.value! ? run : leader),
    null,
  );

/** The share of the way from the run's value up to the ceiling, over the floor's way up to it. */
const headroomAt = (criterion: HeadroomCriterion, ceiling: number, run: RosterRun) =>
  (ceiling - run.interval!.value!) / (ceiling - criterion.floor);

/** The runs headroom ranges over: its best's, and its also-best's. */
function headroomRuns(criterion: HeadroomCriterion, ctx: CriterionContext) {
  // "The best reference": the runs with one of among_tags (the roster's own tags), never an excluded one.
  const excluded = (run: RosterRun, tags: string[]) => run.runTags.some((tag) => tags.includes(tag));
  const notExcluded = ctx.all.filter((run) => !excluded(run, criterion.excludeTags));
  const among = criterion.amongTags
    ? notExcluded.filter((run) => run.tags.some((tag) => criterion.amongTags!.includes(tag)))
    : notExcluded;
  const alsoAmong = criterion.alsoBestExcluding
    ? notExcluded.filter(
        (run) =>
          !criterion.alsoBestExcluding!.test(run.model) && !excluded(run, criterion.alsoBestExcludeTags),
      )
    : [];
  return { among, alsoAmong };
}

function headroom(criterion: HeadroomCriterion, ctx: CriterionContext): CriterionResult {
  const { among, alsoAmong } = headroomRuns(criterion, ctx);
  const missing = unusable(criterion, [...new Set([...among, ...alsoAmong])]);
  if (missing) return missing;
  const top = bestOf(among);
  if (!top) return result(criterion, false, "no run to take the best of", {});
  const per = criterion.ceilings.map((ceiling) => {
    const room = headroomAt(criterion, ceiling, top);
    const below = top.interval!.hi !== null && top.interval!.hi < ceiling;
    return { ceiling, headroom: room, best_hi_below_ceiling: below, holds: room >= criterion.min && below };
  });
  const other = criterion.alsoBestExcluding ? bestOf(alsoAmong) : null;
  return result(
    criterion,
    per.every((entry) => entry.holds),
    headroomSummary(criterion, top, per, other),
    {
      floor: criterion.floor,
      min: criterion.min,
      excluded_tags: criterion.excludeTags,
      among_tags: criterion.amongTags,
      among: among.map((run) => run.role),
      best: { role: top.role, ...point(top) },
      ceilings: per,
      ...(other ? { also_best: alsoBest(criterion, other) } : {}),
    },
  );
}

function alsoBest(criterion: HeadroomCriterion, other: RosterRun) {
  return {
    role: other.role,
    ...point(other),
    headroom: Object.fromEntries(
      criterion.ceilings.map((ceiling) => [String(ceiling), headroomAt(criterion, ceiling, other)]),
    ),
  };
}

function headroomSummary(
  criterion: HeadroomCriterion,
  top: RosterRun,
  per: { ceiling: number; headroom: number; best_hi_below_ceiling: boolean }[],
  other: RosterRun | null,
): string {
  const { min } = criterion;
  const ceilings = per.map(
    (entry) =>
      `C ${entry.ceiling}: H ${entry.headroom.toFixed(3)} ${entry.headroom >= min ? "≥" : "<"} ${min}, ` +
      `CI ${entry.best_hi_below_ceiling ? "below" : "not below"} C`,
  );
  const otherBest = other
    ? `; best model not /${criterion.alsoBestExcluding!.source}/: ` +
      `${other.role} (${other.model}) ${ci(other)}`
    : "";
  return `best ${top.role} (${top.model}) ${ci(top)}: ` + ceilings.join("; ") + otherBest;
}

function failureRates(
  criterion: Extract<Criterion, { kind: "failure_rates" }>,
  ctx: CriterionContext,
): CriterionResult {
  const runs = criterion.runs === "all" ? ctx.all : criterion.runs.map(ctx.run);
  // The runs that can be read are judged even while others are missing: one already failing fails the
  // criterion (the page's verdict), whatever the missing ones would show.
  const rows = runs
    .filter((run) => run.status === "ok")
    .map((run) => {
      const parse = parseShare(criterion, run);
      const holds = !criterion.parseFailures || (parse !== null && parse < criterion.parseFailures.below);
      return { r: run, parse, holds };
    });
  const bad = rows.filter((x) => !x.holds);
  const missing = unusable(criterion, runs);
  if (missing && !bad.length) return missing;
  const summary = bad.length
    ? bad
        .map(
          (x) =>
            `${x.r.role} parse failures ${pct(x.parse)} (not below ${pct(criterion.parseFailures!.below)})`,
        )
        .join("; ") + (missing ? `; ${missing.summary}` : "")
    : `every run's parse failures below ${pct(criterion.parseFailures?.below ?? null)}, API errors below ` +
      `${pct(criterion.apiErrors?.incompleteAt ?? null)} ` +
      `(highest ${pct(Math.max(0, ...rows.map((x) => x.parse ?? 0)))} ` +
      `and ${pct(Math.max(0, ...rows.map((x) => x.r.apiErrorRate ?? 0)))})`;
  return result(criterion, bad.length === 0, summary, {
    parse_failures_below: criterion.parseFailures?.below ?? null,
    api_errors_incomplete_at: criterion.apiErrors?.incompleteAt ?? null,
    runs: Object.fromEntries(
      rows.map((x) => [
        x.r.role,
        { model: x.r.model, parse_failures: x.parse, api_errors: x.r.apiErrorRate, holds: x.holds },
      ]),
    ),
    ...(missing ? { unusable: missing.numbers.unusable! } : {}),
  });
}

/** A run's parse failures: the share over every reply the named metrics cover (each weighted by its n). */
function parseShare(
  criterion: Extract<Criterion, { kind: "failure_rates" }>,
  run: RosterRun,
): number | null {
  if (!criterion.parseFailures) return null;
  const metrics = run.metrics!.metrics ?? {};
  let failed = 0,
    replies = 0;
  for (const name of criterion.parseFailures.metrics) {
    const entry = metrics[name] as { value?: number | null; n?: number } | undefined;
    if (entry && typeof entry.value === "number" && typeof entry.n === "number") {
      failed += entry.value * entry.n;
      replies += entry.n;
    }
  }
  return replies ? failed / replies : null;
}

function audit(criterion: Extract<Criterion, { kind: "audit" }>, ctx: CriterionContext): CriterionResult {
  const runs = criterion.runs.map(ctx.run);
  const missing = unusable(criterion, runs);
  if (missing) return missing;
  const want = stableJson(criterion.equals);
  const shown = JSON.stringify(criterion.equals);
  const rows = runs.map((run) => {
    const got = lookupPointer(run.metrics as unknown as Json, criterion.field);
    const holds = got !== undefined && stableJson(got) === want;
    // Only the roster's own tags make an exception: a failed audit tags a run reasoning-on, excusing
    // nothing.
    const exception = !holds && run.tags.some((tag) => criterion.exceptTags.includes(tag));
    return { r: run, got: got ?? null, holds, exception };
  });
  const failing = rows.filter((x) => !x.holds && !x.exception);
  const exceptions = rows.filter((x) => x.exception);
  const summary =
    (failing.length
      ? failing
          .map((x) => `${x.r.role}: ${criterion.field} is ${JSON.stringify(x.got)}, not ${shown}`)
          .join("; ")
      : `${criterion.field} is ${shown} for every run`) +
    (exceptions.length
      ? `; ${exceptions.map((x) => x.r.role).join(", ")} excepted (${criterion.exceptTags.join(", ")})`
      : "");
  return result(criterion, failing.length === 0, summary, {
    field: criterion.field,
    equals: criterion.equals,
    runs: Object.fromEntries(
      rows.map((x) => [
        x.r.role,
        { model: x.r.model, value: x.got, holds: x.holds, exception: x.exception },
      ]),
    ),
  });
}

/** The roster runs a criterion reads. */
function runsOf(criterion: Criterion, ctx: CriterionContext): RosterRun[] {
  switch (criterion.kind) {
    case "interval_above":
    case "interval_covers":
    case "audit":
      return criterion.runs.map(ctx.run);
    case "intervals_apart":
      return [ctx.run(criterion.above), ctx.run(criterion.below)];
    case "headroom": {
      const { among, alsoAmong } = headroomRuns(criterion, ctx);
      return [...new Set([...among, ...alsoAmong])];
    }
    case "failure_rates":
      return criterion.runs === "all" ? ctx.all : criterion.runs.map(ctx.run);
  }
}

/** The deviations of a run that the criterion refuses. */
function refusedOf(criterion: Criterion, run: RosterRun): Deviation[] {
  const refuse = criterion.refuseDeviations;
  if (refuse === null || !run.metrics) return [];
  return headlineDeviations(run.metrics).filter((x) => refuse === "all" || refuse.includes(x.field));
}

const said = (x: Deviation) =>
  `${x.field} ${JSON.stringify(x.spec)} in the spec, ` +
  `${x.omitted ? "left out" : `sent ${JSON.stringify(x.sent)}`} (rule ${x.rule})`;

/** Incomplete when a run the criterion reads deviates where it refuses that: which, how, and the fix. */
function refusedRuns(criterion: Criterion, runs: RosterRun[]): CriterionResult | null {
  const refused = runs
    .map((run) => ({ run, deviations: refusedOf(criterion, run) }))
    .filter((x) => x.deviations.length);
  if (!refused.length) return null;
  const fields = criterion.refuseDeviations === "all" ? "any field" : criterion.refuseDeviations!.join(", ");
  return {
    id: criterion.id,
    kind: criterion.kind,
    description: criterion.description,
    status: "incomplete",
    summary:
      refused
        .map(
          ({ run, deviations }) =>
            `${run.role} (${run.dir}) deviates from the spec: ` + deviations.map(said).join("; "),
        )
        .join("; ") +
      `; this criterion refuses a run that deviates in ${fields} (refuse_deviations): a run of a model ` +
      "that takes the spec's values completes it",
    numbers: {
      refused_deviations: Object.fromEntries(
        refused.map(({ run, deviations }) => [run.role, deviations as unknown as Json]),
      ),
    },
  };
}

/** The verdict, saying which of the runs it read deviated from the spec (never silent). */
function withDeviations(out: CriterionResult, runs: RosterRun[]): CriterionResult {
  const deviating = runs
    .map((run) => ({ run, deviations: run.metrics ? headlineDeviations(run.metrics) : [] }))
    .filter((x) => x.deviations.length);
  if (!deviating.length) return out;
  const note = deviating
    .map(
      ({ run, deviations }) =>
        `${run.role} deviates from the spec (${deviations.map((x) => x.field).join(", ")})`,
    )
    .join("; ");
  return {
    ...out,
    summary: `${out.summary}; ${note}`,
    numbers: {
      ...out.numbers,
      deviations: Object.fromEntries(
        deviating.map(({ run, deviations }) => [run.role, deviations as unknown as Json]),
      ),
    },
  };
}
