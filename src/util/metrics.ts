// The metrics of a metrics.json (the bootstrap stage's output): entries that carry an interval method.

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

/** What a run's result says every reader must know: the build's notices (a reconstruction, a sample), then
 *  its scorer's. */
export function runNotices(result: object): string[] {
  const build = (result as { notices?: unknown } | null)?.notices;
  return [...(Array.isArray(build) ? build.map(String) : []), ...scorerNotices(result)];
}
