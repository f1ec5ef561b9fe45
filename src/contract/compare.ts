// Pairing items by a task's `compare` declaration, as `medbench compare` and `verify --live` both do: which
// verdicts, which groups (a meta field, or every item as one), which items are left out of both sides.
// Without a declaration the two differ on purpose: `compare` pairs the primary metric's units (its
// bootstrap's statistics), verify --live every boolean verdict (what changed when the requests were sent
// again).
import type { CompareDecl } from "./task.js";
import type { Json } from "../util/json.js";

/** An item as items.jsonl holds it (only what a comparison reads). */
export interface ComparedItem {
  id: string;
  unit?: string;
  meta: Record<string, unknown>;
  verdicts: Record<string, unknown>;
}

/** The comparison to make: the task's declaration, or, when it declares none, every boolean verdict of the
 *  items (in the order they first appear), every item in one group and none left out. */
export interface VerdictComparison {
  decl: CompareDecl;
  /** Whether the task declared it (false: the fallback over every boolean verdict). */
  declared: boolean;
}

export function comparisonOf(
  decl: CompareDecl | null | undefined,
  items: ComparedItem[],
): VerdictComparison {
  if (decl) return { decl, declared: true };
  const names = new Set<string>();
  for (const i of items)
    for (const [verdictName, verdict] of Object.entries(i.verdicts))
      if (typeof verdict === "boolean") names.add(verdictName);
  return { decl: { verdicts: [...names].map((name) => ({ name, label: name })) }, declared: false };
}

/** One item of a verdict's group, with its value on each side (raw: each caller reads them its own way). */
export interface VerdictPair {
  id: string;
  cluster: string;
  a: Json | undefined;
  b: Json | undefined;
}

/** Items of A paired by id with those of B, one list per declared verdict and value of `by` (groups in the
 *  order A first shows them; "all" when there is no `by`). An item whose `leaveOut` verdict is true on
 *  either side, or whose id is in `exclude`, is left out of both; so is an item B does not hold. */
export function pairVerdicts(
  itemsA: ComparedItem[],
  itemsB: ComparedItem[],
  decl: CompareDecl,
  exclude: ReadonlySet<string> = new Set(),
): { left: Set<string>; rows: { verdict: string; group: string; pairs: VerdictPair[] }[] } {
  const by = decl.by ?? null;
  const groupOf = (i: ComparedItem) => (by === null ? "all" : String(i.meta[by]));
  const groups = [...new Set(itemsA.map(groupOf))];
  const left = decl.leaveOut
    ? new Set([...itemsA, ...itemsB].filter((i) => i.verdicts[decl.leaveOut!]).map((i) => i.id))
    : new Set<string>();
  const bById = new Map(itemsB.map((i) => [i.id, i]));
  const kept = itemsA.filter((i) => !left.has(i.id) && !exclude.has(i.id) && bById.has(i.id));
  const rows = decl.verdicts.flatMap((verdict) =>
    groups.map((group) => ({
      verdict: verdict.name,
      group,
      pairs: kept
        .filter((i) => groupOf(i) === group)
        .map((i) => ({
          id: i.id,
          cluster: String(decl.cluster ? i.meta[decl.cluster] : (i.unit ?? i.id)),
          a: i.verdicts[verdict.name] as Json | undefined,
          b: bById.get(i.id)!.verdicts[verdict.name] as Json | undefined,
        })),
    })),
  );
  return { left, rows };
}
