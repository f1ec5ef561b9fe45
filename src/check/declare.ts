// The `check:` block of a spec file in machine form: the roster of runs by model name, tags, and criteria of
// a few generic kinds. `$spec` pointers take values from the published spec (which stays as published and
// alone makes spec_hash). Every value is checked here, with its file:line:column, before any result is read.
import { diagnosticAt } from "../specfile/document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import { resolveRefs, type SpecFile } from "../specfile/load.js";
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
  /** Runs deviating from the spec in these fields (or any: all) cannot stand for their entry here. */
  refuseDeviations: string[] | "all" | null;
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
  /** Metrics the leaderboard shows beside the check's metric, with their intervals. */
  beside: string[];
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
  const raw = resolveRefs(spec.check, "/check", {
    src: () => spec.src,
    spec: spec.spec,
    vars: spec.variables,
    out: problems,
  }) as Raw;
  if (problems.length) throw new DiagnosticError(problems);
  const reader = new CheckReader(spec, problems);
  const metric = raw.metric;
  if (typeof metric !== "string")
    reader.at("/metric", "the check's metric is not a metric name", "e.g. bcr");
  const roster = readRoster(reader, raw.roster as Record<string, Raw>);
  reader.roles = new Set(roster.map((entry) => entry.role));
  const tags: TagRule[] = ((raw.tags as Raw[] | undefined) ?? []).map((tag, i) => ({
    tag: String(tag.tag),
    models: reader.regex(`/tags/${i}/models`, tag.models!),
    alsoReport: typeof tag.also_report === "string" ? tag.also_report : null,
  }));
  const ids = new Set<string>();
  const criteria = (raw.criteria as Raw[]).map((criterion, i) => readCriterion(reader, criterion, i, ids));
  if (problems.length) throw new DiagnosticError(problems);
  return {
    metric: metric as string,
    units: typeof raw.units === "string" ? raw.units : "units.jsonl",
    beside: (raw.beside as string[] | undefined) ?? [],
    roster,
    tags,
    criteria,
  };
}

/** Reads values of the check block, noting each problem (with its place in the spec) and going on. */
class CheckReader {
  /** The roster's roles, once the roster is read. */
  roles = new Set<string>();

  constructor(
    private readonly spec: SpecFile,
    private readonly problems: Diagnostic[],
  ) {}

  at(pointer: string, message: string, fix?: string): void {
    this.problems.push(diagnosticAt(this.spec.src, `/check${pointer}`, message, fix));
  }

  role(pointer: string, name: Json): string {
    if (typeof name === "string" && this.roles.has(name)) return name;
    this.at(
      pointer,
      `no roster entry ${JSON.stringify(name)}`,
      `name one of: ${[...this.roles].join(", ")}`,
    );
    return String(name);
  }

  roleList(pointer: string, list: Json): string[] {
    return (list as Json[]).map((name, i) => this.role(`${pointer}/${i}`, name));
  }

  number(pointer: string, value: Json, ok: (x: number) => boolean, what: string): number {
    if (typeof value === "number" && Number.isFinite(value) && ok(value)) return value;
    this.at(pointer, `${JSON.stringify(value)} is not ${what}`, `give ${what}`);
    return NaN;
  }

  share(pointer: string, value: Json): number {
    return this.number(pointer, value, (x) => x > 0 && x <= 1, "a share in (0, 1]");
  }

  regex(pointer: string, value: Json): RegExp {
    try {
      return new RegExp(String(value), "i");
    } catch (e) {
      this.at(pointer, `not a regular expression: ${(e as Error).message}`, "e.g. ^openai/gpt-6");
      return /$^/;
    }
  }

  paired(pointer: string, options: Raw): PairedOptions {
    const integer = (min: number) => (x: number) => Number.isInteger(x) && x >= min;
    const rng = options.rng === "numpy" || options.rng === "python" ? options.rng : null;
    if (!rng)
      this.at(
        `${pointer}/rng`,
        `${JSON.stringify(options.rng)} is not numpy or python`,
        "numpy (default_rng) or python",
      );
    return {
      resamples: this.number(
        `${pointer}/resamples`,
        options.resamples!,
        integer(1),
        "a count of at least 1",
      ),
      seed: this.number(`${pointer}/seed`, options.seed!, integer(0), "an integer seed of 0 or more"),
      rng: rng ?? "numpy",
      level: this.number(
        `${pointer}/level`,
        options.level!,
        (x) => x > 0 && x < 1,
        "a level between 0 and 1",
      ),
    };
  }
}

function readRoster(reader: CheckReader, raw: Record<string, Raw>): RosterEntry[] {
  const roster: RosterEntry[] = [];
  const models = new Map<string, string>();
  for (const [role, entry] of Object.entries(raw)) {
    const pointer = `/roster/${escapePointer(role)}`;
    const model = entry.model;
    if (typeof model !== "string" || !/^[^\s/]+\/\S+$/.test(model)) {
      reader.at(
        `${pointer}/model`,
        `roster ${role}: ${JSON.stringify(model)} is not a model name`,
        "ROUTE/MODEL",
      );
      continue;
    }
    if (models.has(model))
      reader.at(
        `${pointer}/model`,
        `roster ${role}: ${model} is also ${models.get(model)}`,
        "one role per model",
      );
    models.set(model, role);
    roster.push({
      role,
      model,
      tags: (entry.tags as string[] | undefined) ?? [],
      reasoning: entry.reasoning === "off" || entry.reasoning === "low" ? entry.reasoning : null,
    });
  }
  return roster;
}

/** One criterion; `ids`: the ids of those before it, which it must not repeat. */
function readCriterion(reader: CheckReader, raw: Raw, index: number, ids: Set<string>): Criterion {
  const pointer = `/criteria/${index}`;
  const id = String(raw.id);
  if (ids.has(id))
    reader.at(`${pointer}/id`, `two criteria are called ${id}`, "give each criterion its own id");
  ids.add(id);
  const refuse = raw.refuse_deviations;
  const base = {
    id,
    description: typeof raw.description === "string" ? raw.description : null,
    refuseDeviations:
      refuse === "all" ? ("all" as const) : Array.isArray(refuse) ? refuse.map(String) : null,
  };
  const kind = raw.kind as Criterion["kind"];
  const read = Object.hasOwn(CRITERION_READERS, kind) ? CRITERION_READERS[kind] : undefined;
  if (!read) throw new Error(`unreachable: criterion kind ${String(raw.kind)} passed the schema`);
  return { ...base, ...read(reader, raw, pointer) } as Criterion;
}

/** A criterion's own fields, kind by kind (what follows its id and description). */
type KindFields = Criterion extends infer Each
  ? Each extends Base
    ? Omit<Each, keyof Base>
    : never
  : never;
type KindReader = (reader: CheckReader, raw: Raw, pointer: string) => KindFields;

const intervalCriterion: KindReader = (reader, raw, pointer) => ({
  kind: raw.kind as "interval_above" | "interval_covers",
  runs: reader.roleList(`${pointer}/runs`, raw.runs!),
  value: reader.number(`${pointer}/value`, raw.value!, () => true, "a number"),
});

const CRITERION_READERS: Record<Criterion["kind"], KindReader> = {
  interval_above: intervalCriterion,
  interval_covers: intervalCriterion,
  intervals_apart: (reader, raw, pointer) => {
    const paired = raw.paired ? reader.paired(`${pointer}/paired`, raw.paired as Raw) : PAIRED_DEFAULT;
    const above = reader.role(`${pointer}/above`, raw.above!);
    const below = reader.role(`${pointer}/below`, raw.below!);
    if (above === below)
      reader.at(`${pointer}/below`, "a run cannot be apart from itself", "name two roster entries");
    return { kind: "intervals_apart", above, below, paired };
  },
  headroom: (reader, raw, pointer) => {
    const floor = reader.number(`${pointer}/floor`, raw.floor!, () => true, "a number");
    const ceilings = (raw.ceilings as Json[]).map((x, index) =>
      reader.number(
        `${pointer}/ceilings/${index}`,
        x,
        (ceiling) => !(ceiling <= floor),
        `a ceiling above the floor ${floor}`,
      ),
    );
    return {
      kind: "headroom",
      floor,
      ceilings,
      min: reader.share(`${pointer}/min`, raw.min!),
      excludeTags: (raw.exclude_tags as string[] | undefined) ?? [],
      amongTags: (raw.among_tags as string[] | undefined) ?? null,
      alsoBestExcludeTags: (raw.also_best_exclude_tags as string[] | undefined) ?? [],
      alsoBestExcluding:
        raw.also_best_excluding === undefined
          ? null
          : reader.regex(`${pointer}/also_best_excluding`, raw.also_best_excluding),
    };
  },
  failure_rates: (reader, raw, pointer) => {
    const parse = raw.parse_failures as Raw | undefined;
    const api = raw.api_errors as Raw | undefined;
    if (!parse && !api)
      reader.at(pointer, "failure_rates needs parse_failures or api_errors", "give one or both");
    return {
      kind: "failure_rates",
      runs: raw.runs === "all" ? "all" : reader.roleList(`${pointer}/runs`, raw.runs!),
      parseFailures: parse
        ? {
            metrics: parse.metrics as string[],
            below: reader.share(`${pointer}/parse_failures/below`, parse.below!),
          }
        : null,
      apiErrors: api
        ? { incompleteAt: reader.share(`${pointer}/api_errors/incomplete_at`, api.incomplete_at!) }
        : null,
    };
  },
  audit: (reader, raw, pointer) => {
    const field = String(raw.field);
    if (!field.startsWith("/"))
      reader.at(
        `${pointer}/field`,
        `${JSON.stringify(field)} is not a JSON pointer`,
        "e.g. /metrics/thinking_audit/thinking_off",
      );
    return {
      kind: "audit",
      runs: reader.roleList(`${pointer}/runs`, raw.runs!),
      field,
      equals: raw.equals!,
      exceptTags: (raw.except_tags as string[] | undefined) ?? [],
    };
  },
};
