// Each criterion kind over the roster's runs: pass, fail, or incomplete (a run it needs is missing or has too
// many API errors), always with the numbers it was decided on. Paired statistics use the same code as
// `medbench stats paired` (src/stats/intervals.ts).
import { pairedComparison } from "../stats/intervals.js";
import { lookupPointer } from "../spec/load.js";
import { stableJson, type Json } from "../util/json.js";
import type { Criterion } from "./declare.js";
import type { RosterRun } from "./roster.js";
import type { UnitRecord } from "../contract/records.js";

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
const ci = (r: RosterRun) => `${pct(r.interval!.value)} [${pct(r.interval!.lo)}, ${pct(r.interval!.hi)}]`;
const point = (r: RosterRun) => ({
  model: r.model,
  value: r.interval?.value ?? null,
  lo: r.interval?.lo ?? null,
  hi: r.interval?.hi ?? null,
});

/** The runs a criterion needs that cannot be used, as its incomplete result (or null when all can). */
function unusable(c: Criterion, runs: RosterRun[]): CriterionResult | null {
  const bad = runs.filter((r) => r.status !== "ok");
  if (!bad.length) return null;
  return {
    id: c.id,
    kind: c.kind,
    description: c.description,
    status: "incomplete",
    // Why each run cannot be used, and the build that makes one, is said once, in the roster: a reason
    // repeated under every criterion that needs the run buried the verdict (the JSON keeps it per run).
    summary: "no usable run of " + bad.map((r) => `${r.role} (${r.status})`).join("; ") + ": see the roster",
    numbers: { unusable: bad.map((r) => r.role) },
  };
}

const result = (c: Criterion, pass: boolean, summary: string, numbers: Record<string, Json>) => ({
  id: c.id,
  kind: c.kind,
  description: c.description,
  status: (pass ? "pass" : "fail") as Status,
  summary,
  numbers,
});

export function evaluate(c: Criterion, ctx: CriterionContext): CriterionResult {
  switch (c.kind) {
    case "interval_above":
    case "interval_covers": {
      const runs = c.runs.map(ctx.run);
      const missing = unusable(c, runs);
      if (missing) return missing;
      const holds = (r: RosterRun) => {
        const { lo, hi } = r.interval!;
        if (lo === null || hi === null) return false;
        return c.kind === "interval_above" ? lo > c.value : lo <= c.value && c.value <= hi;
      };
      const [yes, no] =
        c.kind === "interval_above" ? ["lies above", "does not lie above"] : ["covers", "does not cover"];
      const summary = runs.map((r) => `${r.role} ${ci(r)} ${holds(r) ? yes : no} ${pct(c.value)}`).join("; ");
      return result(c, runs.every(holds), summary, {
        value: c.value,
        runs: Object.fromEntries(runs.map((r) => [r.role, { ...point(r), holds: holds(r) }])),
      });
    }
    case "intervals_apart":
      return apart(c, ctx);
    case "headroom":
      return headroom(c, ctx);
    case "failure_rates":
      return failureRates(c, ctx);
    case "audit":
      return audit(c, ctx);
  }
}

function apart(c: Extract<Criterion, { kind: "intervals_apart" }>, ctx: CriterionContext): CriterionResult {
  const above = ctx.run(c.above),
    below = ctx.run(c.below);
  const missing = unusable(c, [above, below]);
  if (missing) return missing;
  const a = above.interval!,
    b = below.interval!;
  const holds = a.lo !== null && b.hi !== null && a.lo > b.hi;
  const ua = ctx.units(above),
    ub = ctx.units(below);
  let paired: Json = null;
  let note = "";
  if (typeof ua === "string" || typeof ub === "string")
    note = `; paired: ${[ua, ub].find((u) => typeof u === "string")}`;
  else {
    try {
      const r = pairedComparison(ua, ub, c.paired);
      paired = { ...r } as unknown as Json;
      note =
        `; paired difference ${r.diff_pp.toFixed(1)} pp [${r.lo.toFixed(1)}, ${r.hi.toFixed(1)}], ` +
        `McNemar p ${r.mcnemar_p.toPrecision(3)} (${r.resamples} resamples, ${r.rng} seed ${r.seed})`;
    } catch (e) {
      note = `; paired: ${(e as Error).message}`;
    }
  }
  const summary =
    `${c.above} ${ci(above)} ${holds ? "lies above" : "does not lie above"} ${c.below} ${ci(below)}` + note;
  return {
    ...result(c, holds, summary, { above: point(above), below: point(below), paired }),
    // Without the paired comparison the criterion is not what the document asks for.
    ...(paired === null ? { status: "incomplete" as Status } : {}),
  };
}

function headroom(c: Extract<Criterion, { kind: "headroom" }>, ctx: CriterionContext): CriterionResult {
  // "The best reference": the runs with one of among_tags (the roster's own tags), never an excluded one.
  const notExcluded = ctx.all.filter((r) => !r.runTags.some((t) => c.excludeTags.includes(t)));
  const among = c.amongTags
    ? notExcluded.filter((r) => r.tags.some((t) => c.amongTags!.includes(t)))
    : notExcluded;
  const alsoAmong = c.alsoBestExcluding
    ? notExcluded.filter(
        (r) =>
          !c.alsoBestExcluding!.test(r.model) && !r.runTags.some((t) => c.alsoBestExcludeTags.includes(t)),
      )
    : [];
  const missing = unusable(c, [...new Set([...among, ...alsoAmong])]);
  if (missing) return missing;
  const best = (runs: RosterRun[]) =>
    runs.reduce<RosterRun | null>(
      (b, r) => (b === null || r.interval!.value! > b.interval!.value! ? r : b),
      null,
    );
  const top = best(among);
  if (!top) return result(c, false, "no run to take the best of", {});
  const h = (C: number, r: RosterRun) => (C - r.interval!.value!) / (C - c.floor);
  const per = c.ceilings.map((C) => {
    const H = h(C, top);
    const below = top.interval!.hi !== null && top.interval!.hi < C;
    return { ceiling: C, headroom: H, best_hi_below_ceiling: below, holds: H >= c.min && below };
  });
  const other = c.alsoBestExcluding ? best(alsoAmong) : null;
  const summary =
    `best ${top.role} (${top.model}) ${ci(top)}: ` +
    per
      .map(
        (p) =>
          `C ${p.ceiling}: H ${p.headroom.toFixed(3)} ${p.headroom >= c.min ? "≥" : "<"} ${c.min}, ` +
          `CI ${p.best_hi_below_ceiling ? "below" : "not below"} C`,
      )
      .join("; ") +
    (other
      ? `; best model not /${c.alsoBestExcluding!.source}/: ${other.role} (${other.model}) ${ci(other)}`
      : "");
  return result(
    c,
    per.every((p) => p.holds),
    summary,
    {
      floor: c.floor,
      min: c.min,
      excluded_tags: c.excludeTags,
      among_tags: c.amongTags,
      among: among.map((r) => r.role),
      best: { role: top.role, ...point(top) },
      ceilings: per,
      ...(other
        ? {
            also_best: {
              role: other.role,
              ...point(other),
              headroom: Object.fromEntries(c.ceilings.map((C) => [String(C), h(C, other)])),
            },
          }
        : {}),
    },
  );
}

function failureRates(
  c: Extract<Criterion, { kind: "failure_rates" }>,
  ctx: CriterionContext,
): CriterionResult {
  const runs = c.runs === "all" ? ctx.all : c.runs.map(ctx.run);
  const missing = unusable(c, runs);
  if (missing) return missing;
  const rows = runs.map((r) => {
    const m = r.metrics!.metrics ?? {};
    let parse: number | null = null;
    if (c.parseFailures) {
      // The share over every reply the named metrics cover (each metric weighted by its n).
      let failed = 0,
        n = 0;
      for (const name of c.parseFailures.metrics) {
        const e = m[name] as { value?: number | null; n?: number } | undefined;
        if (e && typeof e.value === "number" && typeof e.n === "number") {
          failed += e.value * e.n;
          n += e.n;
        }
      }
      parse = n ? failed / n : null;
    }
    const holds = !c.parseFailures || (parse !== null && parse < c.parseFailures.below);
    return { r, parse, holds };
  });
  const bad = rows.filter((x) => !x.holds);
  const summary = bad.length
    ? bad
        .map((x) => `${x.r.role} parse failures ${pct(x.parse)} (not below ${pct(c.parseFailures!.below)})`)
        .join("; ")
    : `every run's parse failures below ${pct(c.parseFailures?.below ?? null)}, API errors below ` +
      `${pct(c.apiErrors?.incompleteAt ?? null)} ` +
      `(highest ${pct(Math.max(0, ...rows.map((x) => x.parse ?? 0)))} ` +
      `and ${pct(Math.max(0, ...rows.map((x) => x.r.apiErrorRate ?? 0)))})`;
  return result(c, bad.length === 0, summary, {
    parse_failures_below: c.parseFailures?.below ?? null,
    api_errors_incomplete_at: c.apiErrors?.incompleteAt ?? null,
    runs: Object.fromEntries(
      rows.map((x) => [
        x.r.role,
        { model: x.r.model, parse_failures: x.parse, api_errors: x.r.apiErrorRate, holds: x.holds },
      ]),
    ),
  });
}

function audit(c: Extract<Criterion, { kind: "audit" }>, ctx: CriterionContext): CriterionResult {
  const runs = c.runs.map(ctx.run);
  const missing = unusable(c, runs);
  if (missing) return missing;
  const want = stableJson(c.equals);
  const shown = JSON.stringify(c.equals);
  const rows = runs.map((r) => {
    const got = lookupPointer(r.metrics as unknown as Json, c.field);
    const holds = got !== undefined && stableJson(got) === want;
    // Only the roster's own tags make an exception: a failed audit tags a run reasoning-on, excusing nothing.
    const exception = !holds && r.tags.some((t) => c.exceptTags.includes(t));
    return { r, got: got ?? null, holds, exception };
  });
  const failing = rows.filter((x) => !x.holds && !x.exception);
  const exceptions = rows.filter((x) => x.exception);
  const summary =
    (failing.length
      ? failing.map((x) => `${x.r.role}: ${c.field} is ${JSON.stringify(x.got)}, not ${shown}`).join("; ")
      : `${c.field} is ${shown} for every run`) +
    (exceptions.length
      ? `; ${exceptions.map((x) => x.r.role).join(", ")} excepted (${c.exceptTags.join(", ")})`
      : "");
  return result(c, failing.length === 0, summary, {
    field: c.field,
    equals: c.equals,
    runs: Object.fromEntries(
      rows.map((x) => [x.r.role, { model: x.r.model, value: x.got, holds: x.holds, exception: x.exception }]),
    ),
  });
}
