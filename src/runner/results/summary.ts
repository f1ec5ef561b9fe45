// What a results folder's metrics.json gives the end of a build: the metrics table's rows, the primary
// metric first (the build-done event's summary).
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import type { SummaryRow } from "../../contract/events.js";
import type { Json } from "../../util/json.js";
import { consult } from "../../util/consulted.js";
import { metricEntries } from "../../util/metrics.js";

/** A results folder's metrics.json, or null when it has none. Consulted: a no-op build's record lists it. */
export function readMetrics(results: string): Record<string, Json> | null {
  const file = join(results, "metrics.json");
  consult(file);
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, Json>;
}

/** The metrics table's rows, the primary metric first. */
export function summaryRows(metrics: { primary?: Json; metrics?: Json }): SummaryRow[] {
  const rows: SummaryRow[] = metricEntries(metrics as { metrics?: Record<string, unknown> }).map(
    ([name, entry]) => ({
      metric: name,
      value: entry.value ?? null,
      lo: entry.lo ?? null,
      hi: entry.hi ?? null,
      n: entry.n ?? 0,
      method: entry.ci_method ?? "",
      unit: entry.unit ?? "proportion",
    }),
  );
  return [
    ...rows.filter((row) => row.metric === metrics.primary),
    ...rows.filter((row) => row.metric !== metrics.primary),
  ];
}
