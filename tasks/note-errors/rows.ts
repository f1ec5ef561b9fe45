// Pair rows as the bootstrap's metric rows (contract v2: one row per unit with numeric `fields`, a statistic
// per metric evaluated on the drawn rows): every field a metric reads is encoded here, and decoded back into
// the PairRow the metric functions take, so the point estimate and each resample run the same function.
import { CATEGORIES, reportedMetrics, type PairRow, type SideRow } from "./metrics.js";
import type { NoVerdictReason, Verdict } from "./verdict.js";

/** The shape of contract v2's MetricRow (src/contract/task.ts), restated so this module stands alone. */
export interface UnitRow {
  id: string;
  value: number;
  cluster: string;
  fields?: Record<string, number>;
}

const VERDICT = { Yes: 1, No: 0 } as const;
const REASONS: (NoVerdictReason | null)[] = [
  null,
  "api_error",
  "truncated",
  "template_echo",
  "no_error_line",
];
const enc = (verdict: Verdict | null) => (verdict === null ? -1 : VERDICT[verdict]);
const dec = (x: number | undefined): Verdict | null => (x === 1 ? "Yes" : x === 0 ? "No" : null);
const EV = ["e_evidence", "c_evidence", "e_hit", "c_hit", "e_hit_chars", "span_hit", "p_line_hit"] as const;

function sideFields(prefix: "e" | "c", side: SideRow): Record<string, number> {
  return {
    [`${prefix}_verdict`]: enc(side.verdict),
    [`${prefix}_strict`]: enc(side.strict),
    [`${prefix}_reason`]: REASONS.indexOf(side.reason),
    [`${prefix}_truncated`]: side.truncated ? 1 : 0,
  };
}
function sideOf(prefix: "e" | "c", fields: Record<string, number>): SideRow {
  return {
    verdict: dec(fields[`${prefix}_verdict`]),
    strict: dec(fields[`${prefix}_strict`]),
    reason: REASONS[fields[`${prefix}_reason`] ?? 0] ?? null,
    truncated: fields[`${prefix}_truncated`] === 1,
  };
}

/** value: both correct (the primary's mean path gives BCR even without a statistic). */
export function toUnitRow(row: PairRow): UnitRow {
  const fields: Record<string, number> = {
    ...sideFields("e", row.e),
    ...sideFields("c", row.c),
    exposed: row.exposed ? 1 : 0,
  };
  for (const category of CATEGORIES) fields[`cat_${category}`] = row.category === category ? 1 : 0;
  for (const kind of EV) fields[kind] = row.ev[kind] ? 1 : 0;
  if (row.scores) Object.assign(fields, { e_score: row.scores.e, c_score: row.scores.c });
  const bothCorrect = row.e.verdict === "Yes" && row.c.verdict === "No";
  return { id: row.pair_id, value: bothCorrect ? 1 : 0, cluster: row.pair_id, fields };
}

export function fromUnitRow(unit: UnitRow): PairRow {
  const fields = unit.fields ?? {};
  const ev = Object.fromEntries(EV.map((kind) => [kind, fields[kind] === 1])) as unknown as PairRow["ev"];
  return {
    pair_id: unit.id,
    category: CATEGORIES.find((category) => fields[`cat_${category}`] === 1) ?? "",
    rule: "",
    condition: "",
    edited_line: "",
    exposed: fields.exposed === 1,
    e: sideOf("e", fields),
    c: sideOf("c", fields),
    ev,
    ...(fields.e_score === undefined || fields.c_score === undefined
      ? {}
      : { scores: { e: fields.e_score, c: fields.c_score } }),
  };
}

const DECODED = Symbol("decoded pair row");
type Decoded = UnitRow & { [DECODED]?: PairRow };

/** contract v2's task.statistics: one per reported metric, over drawn unit rows. */
export function statistics(): Record<string, (rows: readonly UnitRow[]) => number | null> {
  // Resamples draw the same row objects again and again: decode each once, and keep it on the row itself. A
  // WeakMap of every metric's rows (45 metrics, each its own copy) grew past the CPU's caches as runs grew,
  // and each drawn row's lookup in it cost more per item at 20,000 pairs than at 2,000. Rows equal
  // in every field they carry share one decoded row (the metrics never read a pair's id): a resample
  // then walks a few hundred decoded rows that stay in the caches, not one per pair spread over the heap.
  const shared = new Map<string, PairRow>();
  const decodeShared = (unit: UnitRow) => {
    // Every field the row carries (a superset of what fromUnitRow reads), in the order it carries them.
    let key = "";
    for (const field in unit.fields) key += `${field}=${unit.fields[field]},`;
    let row = shared.get(key);
    if (!row) shared.set(key, (row = fromUnitRow(unit)));
    return row;
  };
  const decode = (unit: UnitRow) => ((unit as Decoded)[DECODED] ??= decodeShared(unit));
  return Object.fromEntries(
    reportedMetrics().map((metric) => [
      metric.name,
      (rows: readonly UnitRow[]) => metric.fn(rows.map(decode)),
    ]),
  );
}

/** The task's statistics record, as the task object holds it (the bootstrap part). */
export const STATISTICS = statistics();
