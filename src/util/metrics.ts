// The metrics of a metrics.json (the bootstrap stage's output): entries that carry an interval method, and
// what every reader of a run must be told beside them (its notices, its deviations from the spec).
import type { Json } from "./json.js";

export interface MetricEntry {
  label?: string;
  unit?: "proportion" | "score";
  n?: number;
  value?: number | null;
  lo?: number | null;
  hi?: number | null;
  ci_method?: string;
}

/** The metric entries of a metrics.json, in file order (audit fields such as `request` are not metrics). */
export function metricEntries(file: { metrics?: Record<string, unknown> }): [string, MetricEntry][] {
  return Object.entries(file.metrics ?? {}).filter((e): e is [string, MetricEntry] => {
    const metric = e[1];
    return metric !== null && typeof metric === "object" && "ci_method" in metric;
  });
}

/** What a run's task says of it beside the numbers (`tables.notices` of its scorer: replies read by a rule
 *  of medbench's own choice). */
export function scorerNotices(result: object): string[] {
  const tables = (result as { tables?: unknown } | null)?.tables;
  const own =
    tables && typeof tables === "object" && !Array.isArray(tables)
      ? (tables as { notices?: unknown }).notices
      : undefined;
  return Array.isArray(own) ? own.map(String) : [];
}

/** One deviation of a run from its spec, as metrics.json `deviations` lists it (src/model/deviations.ts). */
export interface Deviation {
  field: string;
  /** The spec's value. */
  spec: Json;
  /** What was sent instead (absent when the field was left out). */
  sent?: Json;
  omitted?: true;
  /** The route and the rule that decided: "openai gpt-5* deviate", "openai reasoning_low_models gpt-oss". */
  rule: string;
  /** The request configurations it applies to, when the task has any. */
  configurations?: string[];
}

/** A run's deviations from its spec (none when metrics.json records none). */
export function runDeviations(result: object): Deviation[] {
  const list = (result as { deviations?: unknown } | null)?.deviations;
  return Array.isArray(list)
    ? list.filter((x): x is Deviation => x !== null && typeof x === "object" && typeof x.field === "string")
    : [];
}

/** One line per deviation, as the build's output, `check` and the report say it. */
export function deviationLine(deviation: Deviation): string {
  const shown = (value: Json | undefined) => JSON.stringify(value);
  const sent = deviation.omitted
    ? "left out (the server's default applies)"
    : `sent ${shown(deviation.sent)}`;
  const where = deviation.configurations?.length
    ? ` (request configurations ${deviation.configurations.join(", ")})`
    : "";
  return (
    `deviation from the spec: ${deviation.field}: ` +
    `the spec asks ${shown(deviation.spec)}, ${sent}${where}; ` +
    `rule ${deviation.rule}`
  );
}

/** What a run's result says every reader must know: the build's notices (a reconstruction, a sample), its
 *  deviations from the spec, then its scorer's notices. */
export function runNotices(result: object): string[] {
  const build = (result as { notices?: unknown } | null)?.notices;
  return [
    ...(Array.isArray(build) ? build.map(String) : []),
    ...runDeviations(result).map(deviationLine),
    ...scorerNotices(result),
  ];
}
