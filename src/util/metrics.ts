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
    const v = e[1];
    return v !== null && typeof v === "object" && "ci_method" in v;
  });
}
