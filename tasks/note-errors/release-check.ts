// The real release against what the task page states of it, before anything is sent: every field this port
// reads maps onto a name the file uses (no guessed default), the item-check exposure is the stated 87 test
// pairs, and the counts per category, condition, edited line and rule are the page's `counts`.
import { FIELDS, type Pair } from "./pairs.js";

/** spec.counts as the page publishes it (tests/note-errors-release.test.ts compares the two). */
export const PAGE_COUNTS = {
  test: {
    per_category: { diagnosis: 160, lab: 160, pharmacotherapy: 300 },
    per_condition: { E11: 77, E78: 10, F32: 91, I10: 87, J30: 45, K29: 64, M17: 149, M54: 97 },
    per_edited_line: { A: 240, O: 80, P: 300 },
    per_rule: {
      DX05: 80,
      DX06: 80,
      LI01: 15,
      LI02: 18,
      LI03: 15,
      LI04: 22,
      LI05: 10,
      LI06: 25,
      LI07: 25,
      LI08: 15,
      LI09: 15,
      PH08: 64,
      PH09: 86,
      PH12: 14,
      PH13: 91,
      PH14: 45,
    },
  },
  train: {
    per_category: { diagnosis: 160, lab: 160, pharmacotherapy: 300 },
    per_rule: {
      DX05: 80,
      DX06: 80,
      LI01: 15,
      LI02: 18,
      LI03: 15,
      LI04: 22,
      LI05: 10,
      LI06: 25,
      LI07: 25,
      LI08: 15,
      LI09: 15,
      PH08: 66,
      PH09: 84,
      PH12: 22,
      PH13: 83,
      PH14: 45,
    },
  },
} as const;

/** spec.item_check.exposure: "87 of them in the current test pairs". */
export const PAGE_EXPOSED_TEST_PAIRS = 87;

type Counts = Record<string, Record<string, number>>;
const TABLES = {
  per_category: "category",
  per_condition: "condition",
  per_edited_line: "edited_line",
  per_rule: "rule",
} as const;

/** What is wrong with one split of the real release against the page, one line each (none: it agrees). */
export function releaseProblems(pairs: Pair[], file: string, page: Counts, exposed: number | null): string[] {
  const out: string[] = [];
  const firstDefault = new Map<string, number>();
  pairs.forEach((p, i) => p.defaulted.forEach((f) => firstDefault.has(f) || firstDefault.set(f, i + 1)));
  for (const [f, line] of firstDefault)
    out.push(
      `${file}:${line}: field ${f} is absent (tried ${FIELDS[f as keyof typeof FIELDS].join(", ")}), ` +
        "and the real release is read without guessed defaults: add its name to FIELDS " +
        "(tasks/note-errors/pairs.ts)",
    );
  for (const [table, field] of Object.entries(TABLES)) {
    const want = page[table];
    if (!want) continue;
    const got: Record<string, number> = {};
    for (const p of pairs) got[p[field]] = (got[p[field]] ?? 0) + 1;
    const keys = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort();
    const diff = keys.filter((k) => (got[k] ?? 0) !== (want[k] ?? 0));
    if (diff.length)
      out.push(
        `${file}: counts.${table} differ from the page: ` +
          diff.map((k) => `${k} ${got[k] ?? 0} (page ${want[k] ?? 0})`).join(", "),
      );
  }
  if (exposed !== null) {
    const n = pairs.filter((p) => p.item_check_exposed).length;
    if (n !== exposed)
      out.push(
        `${file}: ${n} pairs marked item_check_exposed, the page states ${exposed} ` +
          "(item_check.exposure): the field does not map onto the file's",
      );
  }
  return out;
}
