// The `check:` block of a spec file in machine form: the roster of runs by model name, tags, and criteria
// of a few generic kinds. `$spec` pointers take values from the published spec (which stays as published
// and alone makes spec_hash). Every value is checked here, with its file:line:column, before any result
// is read.
import { diagnosticAt } from "../spec/document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import { resolveRefs, type SpecFile } from "../spec/load.js";
import type { RngName } from "../stats/intervals.js";
import { escapePointer, type Json } from "../util/json.js";

export interface RosterEntry {
  role: string;
  model: string;
  tags: string[];
  /** What the run's recorded request and thinking audit must show (src/check/reasoning.ts). */
  reasoning: ReasoningRequirement | null;
}

/** off: no reasoning asked for and the thinking audit holds; low: reasoning effort low was sent. */
export type ReasoningRequirement = "off" | "low";

/** A tag given to every run whose model name matches (e.g. the item-check reviewers' families). */
export interface TagRule {
  tag: string;
  models: RegExp;
  alsoReport: string | null;
}

export interface PairedOptions {
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
}

interface Base {
  id: string;
  description: string | null;
}
export type Criterion = Base &
  (
    | { kind: "interval_above" | "interval_covers"; runs: string[]; value: number }
    | { kind: "intervals_apart"; above: string; below: string; paired: PairedOptions }
    | {
        kind: "headroom";
        floor: number;
        ceilings: number[];
        min: number;
        excludeTags: string[];
        /** The best is taken over runs with one of these tags (null: every run not excluded). */
        amongTags: string[] | null;
        alsoBestExcluding: RegExp | null;
        alsoBestExcludeTags: string[];
      }
    | {
        kind: "failure_rates";
        runs: string[] | "all";
        parseFailures: { metrics: string[]; below: number } | null;
        apiErrors: { incompleteAt: number } | null;
      }
    | { kind: "audit"; runs: string[]; field: string; equals: Json; exceptTags: string[] }
  );

export interface CheckDecl {
  /** The metric every criterion reads (the task's primary). */
  metric: string;
  /** The results file holding the metric's value per unit (what a paired comparison reads). */
  units: string;
  roster: RosterEntry[];
  tags: TagRule[];
  criteria: Criterion[];
}

/** The paired bootstrap of the document's check: 2,000 resamples, numpy default_rng(0), 95 %. */
const PAIRED_DEFAULT: PairedOptions = { resamples: 2000, seed: 0, rng: "numpy", level: 0.95 };

type Raw = Record<string, Json>;

/** The spec's check, resolved and checked; null when the spec declares none. */
export function declaredCheck(spec: SpecFile): CheckDecl | null {
  if (spec.check === null) return null;
  const problems: Diagnostic[] = [];
  const src = () => spec.src;
  const raw = resolveRefs(spec.check, "/check", {
    src,
    spec: spec.spec,
    vars: spec.variables,
    out: problems,
  }) as Raw;
  if (problems.length) throw new DiagnosticError(problems);
  const at = (pointer: string, message: string, fix?: string) =>
    problems.push(diagnosticAt(spec.src, `/check${pointer}`, message, fix));

  const metric = raw.metric;
  if (typeof metric !== "string") at("/metric", "the check's metric is not a metric name", "e.g. bcr");
  const roster: RosterEntry[] = [];
  const models = new Map<string, string>();
  for (const [role, e] of Object.entries(raw.roster as Record<string, Raw>)) {
    const p = `/roster/${escapePointer(role)}`;
    if (typeof e.model !== "string" || !/^[^\s/]+\/\S+$/.test(e.model)) {
      at(`${p}/model`, `roster ${role}: ${JSON.stringify(e.model)} is not a model name`, "ROUTE/MODEL");
      continue;
    }
    if (models.has(e.model))
      at(`${p}/model`, `roster ${role}: ${e.model} is also ${models.get(e.model)}`, "one role per model");
    models.set(e.model, role);
    roster.push({
      role,
      model: e.model,
      tags: (e.tags as string[] | undefined) ?? [],
      reasoning: e.reasoning === "off" || e.reasoning === "low" ? e.reasoning : null,
    });
  }
  const roles = new Set(roster.map((r) => r.role));
  const role = (pointer: string, name: Json) => {
    if (typeof name === "string" && roles.has(name)) return name;
    at(pointer, `no roster entry ${JSON.stringify(name)}`, `name one of: ${[...roles].join(", ")}`);
    return String(name);
  };
  const roleList = (pointer: string, list: Json) =>
    (list as Json[]).map((n, i) => role(`${pointer}/${i}`, n));
  const number = (pointer: string, v: Json, ok: (x: number) => boolean, what: string) => {
    if (typeof v === "number" && Number.isFinite(v) && ok(v)) return v;
    at(pointer, `${JSON.stringify(v)} is not ${what}`, `give ${what}`);
    return NaN;
  };
  const share = (pointer: string, v: Json) => number(pointer, v, (x) => x > 0 && x <= 1, "a share in (0, 1]");
  const regex = (pointer: string, v: Json) => {
    try {
      return new RegExp(String(v), "i");
    } catch (e) {
      at(pointer, `not a regular expression: ${(e as Error).message}`, "e.g. ^openai/gpt-6");
      return /$^/;
    }
  };

  const tags: TagRule[] = ((raw.tags as Raw[] | undefined) ?? []).map((t, i) => ({
    tag: String(t.tag),
    models: regex(`/tags/${i}/models`, t.models!),
    alsoReport: typeof t.also_report === "string" ? t.also_report : null,
  }));

  const pairedOf = (p: string, o: Raw): PairedOptions => {
    const integer = (min: number) => (x: number) => Number.isInteger(x) && x >= min;
    const rng = o.rng === "numpy" || o.rng === "python" ? o.rng : null;
    if (!rng)
      at(`${p}/rng`, `${JSON.stringify(o.rng)} is not numpy or python`, "numpy (default_rng) or python");
    return {
      resamples: number(`${p}/resamples`, o.resamples!, integer(1), "a count of at least 1"),
      seed: number(`${p}/seed`, o.seed!, integer(0), "an integer seed of 0 or more"),
      rng: rng ?? "numpy",
      level: number(`${p}/level`, o.level!, (x) => x > 0 && x < 1, "a level between 0 and 1"),
    };
  };

  const ids = new Set<string>();
  const criteria: Criterion[] = (raw.criteria as Raw[]).map((c, i) => {
    const p = `/criteria/${i}`;
    const id = String(c.id);
    if (ids.has(id)) at(`${p}/id`, `two criteria are called ${id}`, "give each criterion its own id");
    ids.add(id);
    const base = { id, description: typeof c.description === "string" ? c.description : null };
    switch (c.kind) {
      case "interval_above":
      case "interval_covers":
        return {
          ...base,
          kind: c.kind,
          runs: roleList(`${p}/runs`, c.runs!),
          value: number(`${p}/value`, c.value!, () => true, "a number"),
        };
      case "intervals_apart": {
        const paired = c.paired ? pairedOf(`${p}/paired`, c.paired as Raw) : PAIRED_DEFAULT;
        const above = role(`${p}/above`, c.above!);
        const below = role(`${p}/below`, c.below!);
        if (above === below) at(`${p}/below`, "a run cannot be apart from itself", "name two roster entries");
        return { ...base, kind: c.kind, above, below, paired };
      }
      case "headroom": {
        const floor = number(`${p}/floor`, c.floor!, () => true, "a number");
        const ceilings = (c.ceilings as Json[]).map((x, j) =>
          number(`${p}/ceilings/${j}`, x, (v) => !(v <= floor), `a ceiling above the floor ${floor}`),
        );
        return {
          ...base,
          kind: c.kind,
          floor,
          ceilings,
          min: share(`${p}/min`, c.min!),
          excludeTags: (c.exclude_tags as string[] | undefined) ?? [],
          amongTags: (c.among_tags as string[] | undefined) ?? null,
          alsoBestExcludeTags: (c.also_best_exclude_tags as string[] | undefined) ?? [],
          alsoBestExcluding:
            c.also_best_excluding === undefined
              ? null
              : regex(`${p}/also_best_excluding`, c.also_best_excluding),
        };
      }
      case "failure_rates": {
        const pf = c.parse_failures as Raw | undefined;
        const ae = c.api_errors as Raw | undefined;
        if (!pf && !ae) at(p, "failure_rates needs parse_failures or api_errors", "give one or both");
        return {
          ...base,
          kind: c.kind,
          runs: c.runs === "all" ? "all" : roleList(`${p}/runs`, c.runs!),
          parseFailures: pf
            ? { metrics: pf.metrics as string[], below: share(`${p}/parse_failures/below`, pf.below!) }
            : null,
          apiErrors: ae ? { incompleteAt: share(`${p}/api_errors/incomplete_at`, ae.incomplete_at!) } : null,
        };
      }
      case "audit": {
        const field = String(c.field);
        if (!field.startsWith("/"))
          at(
            `${p}/field`,
            `${JSON.stringify(field)} is not a JSON pointer`,
            "e.g. /metrics/thinking_audit/thinking_off",
          );
        return {
          ...base,
          kind: c.kind,
          runs: roleList(`${p}/runs`, c.runs!),
          field,
          equals: c.equals!,
          exceptTags: (c.except_tags as string[] | undefined) ?? [],
        };
      }
      default:
        throw new Error(`unreachable: criterion kind ${String(c.kind)} passed the schema`);
    }
  });
  if (problems.length) throw new DiagnosticError(problems);
  return {
    metric: metric as string,
    units: typeof raw.units === "string" ? raw.units : "units.jsonl",
    roster,
    tags,
    criteria,
  };
}
