// The real release against what the task page states of it, before anything is sent: every field this port
// reads maps onto a name the file uses (no guessed default), the item-check exposure is the stated 87 test
// pairs, and the counts per category, condition, edited line and rule are the page's `counts`.
import { FIELDS, type Pair } from "./pairs.js";

/** The page's `counts` (spec.counts), which the prompts stage takes as its `page_counts` parameter. */
export interface PageCounts {
  test: Counts;
  train: Counts;
}

export const PAGE_EXPOSED_TEST_PAIRS = 87;

type Counts = Record<string, Record<string, number>>;
const TABLES = {
  per_category: "category",
  per_condition: "condition",
  per_edited_line: "edited_line",
  per_rule: "rule",
} as const;

/** What is wrong with one split of the real release against the page, one line each (none: it agrees). */
export function releaseProblems(
  pairs: Pair[],
  file: string,
  page: Counts,
  exposed: number | null,
): string[] {
  const out: string[] = [];
  const firstDefault = new Map<string, number>();
  pairs.forEach((pair, i) =>
    pair.defaulted.forEach((field) => firstDefault.has(field) || firstDefault.set(field, i + 1)),
  );
  for (const [field, line] of firstDefault) {
    const names = FIELDS[field as keyof typeof FIELDS].join(", ");
    out.push(
      `${file}:${line}: field ${field} is absent (tried ${names}), ` +
        "and the real release is read without guessed defaults: add its name to FIELDS " +
        "(tasks/note-errors/pairs.ts)",
    );
  }
  for (const [table, field] of Object.entries(TABLES)) {
    const want = page[table];
    if (!want) continue;
    const got: Record<string, number> = {};
    for (const pair of pairs) got[pair[field]] = (got[pair[field]] ?? 0) + 1;
    const keys = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort();
    const diff = keys.filter((name) => (got[name] ?? 0) !== (want[name] ?? 0));
    if (diff.length)
      out.push(
        `${file}: counts.${table} differ from the page: ` +
          diff.map((name) => `${name} ${got[name] ?? 0} (page ${want[name] ?? 0})`).join(", "),
      );
  }
  if (exposed !== null) {
    const exposedCount = pairs.filter((pair) => pair.item_check_exposed).length;
    if (exposedCount !== exposed)
      out.push(
        `${file}: ${exposedCount} pairs marked item_check_exposed, the page states ${exposed} ` +
          "(item_check.exposure): the field does not map onto the file's",
      );
  }
  return out;
}
