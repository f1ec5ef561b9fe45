// bootstrap: intervals for every metric the scorer declared, paired comparisons, and the run's metrics.json.
import { type StageContext, type StageKind, type StageOutput } from "../src/contract/stage.js";
import { StageError } from "../src/errors.js";
import { stableJson, type Json } from "../src/util/json.js";
import type { RngName } from "../src/stats/intervals.js";
import { meanSd } from "../src/stats/mean-sd.js";
import { MAX_RESAMPLES } from "../src/stats/limits.js";
import { writeRecords } from "../src/contract/records.js";
import type { MetricRows, PairedRows, Statistic } from "../tasks/task.js";

interface Params {
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
  paired?: { resamples: number; seed: number; rng: RngName };
  primary?: string;
  trained_on?: string | null;
}

const RNG = {
  type: "string",
  enum: ["numpy", "python"],
  description: "numpy default_rng or CPython random",
} as const;

/**
 * What metrics.json says of one metric's interval, whichever procedure made it (keys are sorted on write).
 */
function metricEntry(
  metric: MetricRows,
  ci: {
    n: number;
    clusters: number;
    point: number | null;
    lo: number | null;
    hi: number | null;
    method: string;
    level: number;
    resamples: number;
    seed: number;
    rng: RngName;
  },
): Record<string, Json> {
  return {
    label: metric.label,
    unit: metric.unit ?? "proportion",
    n: ci.n,
    clusters: ci.clusters,
    value: ci.point,
    lo: ci.lo,
    hi: ci.hi,
    ci_method: ci.method,
    level: ci.level,
    resamples: ci.resamples,
    seed: ci.seed,
    rng: ci.rng,
  };
}

/** A statistic's point is a finite number in its unit's range, or null (undefined): anything else is a bug
 *  of the task's statistic, refused rather than published as a number. */
function refuseStatisticPoint(metric: MetricRows, point: number | null): void {
  const unit = metric.unit ?? "proportion";
  const outOfRange = unit === "proportion" && point !== null && (point < 0 || point > 1);
  if (point === null || (Number.isFinite(point) && !outOfRange)) return;
  throw new StageError(
    `the task's statistic \`${metric.statistic}\` returned ${point} for metric ${metric.name}` +
      (outOfRange ? ", outside its unit proportion's range [0, 1]" : ", not a finite number"),
    "make the statistic (the task's `statistics`) return a finite number in the metric's unit, " +
      "or null where it is undefined",
  );
}

type Scored = { metrics: MetricRows[]; paired: PairedRows[] };
type Procedures = Pick<
  typeof import("../src/stats/intervals.js"),
  "bootstrapCiPlan" | "pairedComparison" | "statisticCiPlan" | "runPlans"
>;

/** Every metric's interval and every paired comparison of one scored block. The metrics' intervals are
 *  planned first and drawn by runPlans: the draws one metric at a time would see, made once for all of them
 *  (exported for tests/structure/task-complexity.test.ts). */
export function intervalsOf(
  scored: Scored,
  statistics: Record<string, Statistic> | undefined,
  params: Params,
  procedures: Procedures,
): { metrics: Record<string, Json>; paired: Record<string, Json> } {
  const entries: [string, () => Json][] = [];
  const plans: Plan[] = [];
  for (const metric of scored.metrics) {
    const { plan, entry } = metricPlan(metric, statistics, params, procedures);
    if (plan) plans.push(plan);
    entries.push([metric.name, entry]);
  }
  procedures.runPlans(plans, params);
  const metrics: Record<string, Json> = {};
  for (const [name, entry] of entries) metrics[name] = entry();
  const paired: Record<string, Json> = {};
  const pp = params.paired ?? { resamples: 2000, seed: 0, rng: "python" as RngName };
  for (const comparison of scored.paired) {
    if (comparison.a.length === 0) continue;
    const result = procedures.pairedComparison(comparison.a, comparison.b, { ...pp, level: params.level });
    paired[comparison.name] = { label: comparison.label, ...result } as unknown as Json;
  }
  return { metrics, paired };
}

type Plan = { g: number; each(idx: Int32Array): void };

/** One metric's share of the draws (none for a metric without rows), and its metrics.json entry once
 *  runPlans has drawn for it: a task statistic's percentile bootstrap, or the mean's cluster bootstrap. */
function metricPlan(
  metric: MetricRows,
  statistics: Record<string, Statistic> | undefined,
  params: Params,
  { bootstrapCiPlan, statisticCiPlan }: Procedures,
): { plan?: Plan; entry: () => Json } {
  if (metric.rows.length === 0)
    return {
      entry: () => ({
        label: metric.label,
        unit: metric.unit ?? "proportion",
        n: 0,
        value: null,
        lo: null,
        hi: null,
        ci_method: "none",
      }),
    };
  const { resamples, seed, rng, level } = params;
  if (metric.statistic !== undefined && metric.statistic !== "mean") {
    const statistic = statistics?.[metric.statistic];
    if (!statistic)
      throw new StageError(
        `metric ${metric.name} names the statistic \`${metric.statistic}\`, which the task does not define`,
        `define it in the task's \`statistics\` ` +
          `(known: ${Object.keys(statistics ?? {}).join(", ") || "none"})`,
      );
    const plan = statisticCiPlan(metric.rows, statistic, { resamples, seed, rng, level });
    const entry = () => {
      const ci = plan.done();
      refuseStatisticPoint(metric, ci.point);
      return {
        ...metricEntry(metric, ci),
        statistic: metric.statistic!,
        ...(ci.undefined_resamples ? { undefined_resamples: ci.undefined_resamples } : {}),
      };
    };
    return { plan, entry };
  }
  const plan = bootstrapCiPlan(
    metric.rows.map((row) => ({ value: row.value, cluster: row.cluster })),
    { resamples, seed, rng, level, fallback: metric.ciFallback !== "none" },
  );
  return { plan, entry: () => metricEntry(metric, plan.done()) };
}

interface RunCounts {
  api_errors: number;
  truncated: number;
  n: number;
}
const num = (value: Json | undefined) => (typeof value === "number" ? value : 0);

/** Each metric's mean and sample SD over the configurations (the paper's primary), with the values. */
function overConfigurations(per: Record<string, Json>): Record<string, Json> {
  const names = new Set<string>();
  for (const configuration of Object.values(per))
    for (const metricName of Object.keys((configuration as { metrics: object }).metrics))
      names.add(metricName);
  const out: Record<string, Json> = {};
  for (const name of names) {
    const values: Record<string, number | null> = {};
    for (const [conf, configuration] of Object.entries(per)) {
      const metric = (configuration as { metrics: Record<string, { value?: number | null }> }).metrics[name];
      values[conf] = metric?.value ?? null;
    }
    out[name] = { ...meanSd(Object.values(values)), values };
  }
  return out;
}

export const bootstrap: StageKind = {
  kind: "bootstrap",
  inputs: {
    score: { outputs: { metrics: "metrics", tables: "tables" } },
    model: { outputs: { audit: "audit" }, optional: true },
    judge: { outputs: { audit: "audit" }, optional: true },
    prompts: { outputs: { info: "info" }, optional: true },
    release: { release: true, optional: true },
    // A small run on another split that checks what the main run relies on (e.g. a per-model override
    // validated on train notes): its score and its model's audit, recorded as metrics.json `validation`.
    validation: { outputs: { metrics: "metrics" }, optional: true },
    validation_model: { outputs: { audit: "audit" }, optional: true },
  },
  outputs: { metrics: "result", units: "units" },
  // It evaluates the task's metric statistics, when it has any (`mean` is the kind's own): their part's code
  // is in its key.
  taskParts: (_params, task) => (task.statistics ? ["statistics"] : []),
  required: ["resamples", "seed", "rng", "level"],
  params: {
    resamples: { type: "integer", minimum: 1, maximum: MAX_RESAMPLES },
    seed: { type: "integer", minimum: 0 },
    rng: RNG,
    level: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1, description: "e.g. 0.95" },
    paired: {
      type: "object",
      required: ["resamples", "seed", "rng"],
      properties: {
        resamples: { type: "integer", minimum: 1, maximum: MAX_RESAMPLES },
        seed: { type: "integer", minimum: 0 },
        rng: RNG,
      },
    },
    primary: { type: ["string", "null"], description: "the primary metric's name" },
    trained_on: {
      type: ["string", "null"],
      pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
      description: "the split of this task's release the model was fine-tuned on (null: none)",
    },
  },
  // What the result must record about the build it came from.
  async identify(ctx) {
    return {
      slug: ctx.build.slug,
      version: ctx.build.version,
      spec_hash: ctx.build.specHash,
      medbench: ctx.build.medbench,
      recipe: ctx.build.recipe,
    };
  },
  // Clopper-Pearson's beta quantile (about 410 modules as one file, 11 to 40 ms to load), which a run loads
  // as soon as one metric's interval falls back to it.
  ahead() {
    (require("../src/stats/intervals.js") as typeof import("../src/stats/intervals.js")).loadBetaQuantile();
  },
  async run(ctx) {
    const procedures = await import("../src/stats/intervals.js");
    // resultOf is synchronous: the draws are let go once every interval is made (they are the largest thing
    // the stage holds, and nothing after it reads them).
    try {
      return resultOf(ctx, procedures);
    } finally {
      procedures.forgetDraws();
    }
  },
};

type Info = {
  partial: boolean;
  subset: Json;
  limit: Json;
  selected: number;
  total: number;
  configurations?: string[];
  notices?: string[];
  sample?: string;
};

type ScoredRun = Scored & { headline?: string; configurations?: Record<string, Scored> };

/** What the stage reads: the scored metrics and tables, the model's audit and the prompts' selection. */
function readInputs(ctx: StageContext): {
  scored: ScoredRun;
  tables: Record<string, Json>;
  audit: Record<string, Json>;
  info: Info | null;
} {
  const scored = JSON.parse(ctx.inputs.score!.text("metrics")) as ScoredRun;
  const tables = JSON.parse(ctx.inputs.score!.text("tables")) as Record<string, Json>;
  const audit = ctx.inputs.model ? (JSON.parse(ctx.inputs.model.text("audit")) as Record<string, Json>) : {};
  const info = ctx.inputs.prompts ? (JSON.parse(ctx.inputs.prompts.text("info")) as Info) : null;
  return { scored, tables, audit, info };
}

/** The run's counts. With several configurations they are the headline's (as its metrics are); each
 *  configuration's are beside its metrics, and the pooled ones in all_configurations. */
function ownCounts(
  audit: Record<string, Json>,
  byConf: Record<string, RunCounts> | undefined,
  headline: string | undefined,
): RunCounts {
  if (byConf && headline !== undefined && byConf[headline]) return byConf[headline];
  return { api_errors: num(audit.api_errors), truncated: num(audit.truncated), n: num(audit.n) };
}

/** The stage's outputs: every interval of the scored metrics, and the result around them. */
function resultOf(ctx: StageContext, procedures: Procedures): Record<string, StageOutput> {
  const params = ctx.params as unknown as Params;
  const { scored, tables, audit, info } = readInputs(ctx);
  const { metrics, paired } = intervalsOf(scored, ctx.task.statistics, params, procedures);
  // More than one request configuration: each one's metrics, and each metric's mean and SD over them.
  const perConfiguration = configurationIntervals(ctx, scored, params, procedures);
  const byConf = audit.by_configuration as Record<string, RunCounts> | undefined;
  const own = ownCounts(
    audit,
    perConfiguration ? byConf : undefined,
    scored.headline ?? info?.configurations?.[0],
  );
  const runFields = runFieldsOf(ctx, audit, own);
  // One name, one value: a task metric may not share a name with the run's own fields.
  const clash = Object.keys(metrics).filter((metricName) => metricName in runFields);
  if (clash.length)
    throw new Error(
      `task ${ctx.build.slug}: metric ${clash.join(", ")} has the name of a field medbench records ` +
        "for every run (metrics.json); rename the metric",
    );
  const out = {
    slug: ctx.build.slug,
    version: ctx.build.version,
    spec_hash: ctx.build.specHash,
    medbench_version: ctx.build.medbench,
    hash_recipe: ctx.build.recipe,
    inputs: ctx.inputs.release ? ctx.inputs.release.hashes : {},
    model: audit.model ?? null,
    route: audit.route ?? null,
    // How the requests sent differ from the spec's (src/model/deviations.ts), when they do.
    ...(Array.isArray(audit.deviations) ? { deviations: audit.deviations } : {}),
    partial: info?.partial ?? false,
    selection: info
      ? { subset: info.subset, limit: info.limit, items: info.selected, of: info.total }
      : null,
    incomplete: audit.incomplete === true,
    ...(ctx.inputs.validation_model ? { validation: validationOf(ctx) } : {}),
    // A model fine-tuned on the task's own data is tagged and kept off the headline (check, report).
    ...(params.trained_on ? { trained_on: params.trained_on } : {}),
    ...(info?.notices ? { notices: info.notices } : {}),
    // The bundled synthetic sample's label: such a result says nothing about any model.
    ...(info?.sample ? { synthetic_sample: info.sample } : {}),
    ...(info?.configurations ? { configuration: scored.headline ?? info.configurations[0] ?? null } : {}),
    ...(perConfiguration ? configurationFields(perConfiguration, byConf, audit) : {}),
    primary: params.primary ?? scored.metrics.find((metric) => metric.primary)?.name ?? null,
    metrics: { ...metrics, ...runFields },
    // With several configurations, the requests the run's counts are of (the headline's); otherwise the
    // selection's items.
    ...(byConf && perConfiguration ? { requests: own.n } : {}),
    paired,
    tables,
  };
  // The primary's rows, so that two runs can be compared pair by pair (medbench check, stats paired).
  const primaryRows = scored.metrics.find((metric) => metric.name === out.primary)?.rows ?? [];
  const units = writeRecords(
    "units",
    primaryRows.map((row) => ({ id: row.id, cluster: row.cluster, value: row.value })),
  );
  return { metrics: stableJson(out), units };
}

/**
 * The validation run's record: how many requests it sent (none: nothing to validate for this model), their
 * API errors, its thinking audit and request fields, and the point value of each metric its score gives.
 */
function validationOf(ctx: StageContext): Json {
  const audit = JSON.parse(ctx.inputs.validation_model!.text("audit")) as Record<string, Json>;
  if (!audit.n) return null;
  const scored = ctx.inputs.validation
    ? (JSON.parse(ctx.inputs.validation.text("metrics")) as ScoredRun)
    : { metrics: [] };
  const point = (metric: MetricRows): number | null => {
    const statistic = metric.statistic ? ctx.task.statistics?.[metric.statistic] : undefined;
    if (statistic) return statistic(metric.rows);
    return metric.rows.length
      ? metric.rows.reduce((sum, row) => sum + row.value, 0) / metric.rows.length
      : null;
  };
  return {
    requests: audit.n,
    api_errors: audit.api_errors ?? 0,
    request: audit.request ?? null,
    thinking_audit: audit.thinking_audit ?? null,
    metrics: Object.fromEntries(scored.metrics.map((metric) => [metric.name, point(metric)])),
  };
}

/** Each request configuration's intervals, when the scorer scored more than one (null otherwise). */
function configurationIntervals(
  ctx: StageContext,
  scored: ScoredRun,
  params: Params,
  procedures: Procedures,
): Record<string, Json> | null {
  if (!scored.configurations) return null;
  return Object.fromEntries(
    Object.entries(scored.configurations).map(([name, configuration]) => [
      name,
      intervalsOf(configuration, ctx.task.statistics, params, procedures) as Json,
    ]),
  );
}

/** The run's own fields beside the task's metrics: what was sent, and how the requests and replies went. */
function runFieldsOf(ctx: StageContext, audit: Record<string, Json>, own: RunCounts): Record<string, Json> {
  return {
    request: audit.request ?? null,
    response_format: audit.response_format ?? null,
    thinking_audit: audit.thinking_audit ?? null,
    // The answers' token totals (a route's model only); their cost is worked out where it is shown.
    ...(audit.tokens !== undefined ? { tokens: audit.tokens } : {}),
    ...(audit.replies_without_usage !== undefined
      ? { replies_without_usage: audit.replies_without_usage }
      : {}),
    api_errors: own.api_errors,
    // Requests the server refused for good (the model stage's audit has them only when there are any).
    ...(audit.refused ? { refused: audit.refused } : {}),
    truncated: own.truncated,
    // A route's replies that are no text answer (refusals, filtered, tool calls): docs/model-requests.md.
    ...(audit.reply_audit !== undefined ? { reply_audit: audit.reply_audit } : {}),
    ...(ctx.inputs.judge ? { judges: JSON.parse(ctx.inputs.judge.text("audit")) as Json } : {}),
  };
}

/** With several configurations: each one's intervals (and counts), each metric over them, and the pooled
 *  counts. */
function configurationFields(
  perConfiguration: Record<string, Json>,
  byConf: Record<string, RunCounts> | undefined,
  audit: Record<string, Json>,
): Record<string, Json> {
  return {
    configurations: byConf
      ? Object.fromEntries(
          Object.entries(perConfiguration).map(([name, configuration]) => [
            name,
            { ...(configuration as Record<string, Json>), run: (byConf[name] ?? null) as unknown as Json },
          ]),
        )
      : perConfiguration,
    over_configurations: overConfigurations(perConfiguration),
    ...(byConf
      ? {
          all_configurations: {
            api_errors: num(audit.api_errors),
            truncated: num(audit.truncated),
            n: num(audit.n),
          },
        }
      : {}),
  };
}
