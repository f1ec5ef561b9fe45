// From parsed replies to items (one per note: ids, labels and verdicts, never note or Evidence text) and
// from items to pair rows, the unit every metric and the bootstrap resample.
import type { Json } from "../../src/util/json.js";
import { sideEvidence, type EvidenceRef } from "./evidence.js";
import { breakdown, reportedMetrics, type BreakdownKey, type PairRow, type SideRow } from "./metrics.js";
import type { NoteMeta } from "./prompts.js";
import type { ParsedVerdict } from "./verdict.js";
import { PARSER_CLASSES } from "./parser-classes.js";

const OURS = new Set(PARSER_CLASSES.filter((entry) => entry.source === "ours").map((entry) => entry.id));

export interface NoteItem {
  id: string;
  meta: NoteMeta;
  verdicts: {
    verdict: "Yes" | "No" | null;
    strict: "Yes" | "No" | null;
    reason: string | null;
    truncated: boolean;
    think: boolean;
    evidence: boolean;
    evidence_hit: boolean;
    evidence_hit_chars: boolean;
    span_hit: boolean;
    p_line_hit: boolean;
    /** The reply's parser class (parser-classes.ts). */
    parser_class: string;
    /** A score-reading probe's decision score, when its reply gave one. */
    score?: number;
  };
}

export interface ScoredRequest {
  id: string;
  meta: NoteMeta & { evidence_ref: EvidenceRef };
}

export function noteItem(req: ScoredRequest, parsed: ParsedVerdict, parserClass: string): NoteItem {
  const { evidence_ref, ...meta } = req.meta;
  const facts = sideEvidence(parsed.evidence, evidence_ref);
  return {
    id: req.id,
    meta,
    verdicts: {
      verdict: parsed.verdict,
      strict: parsed.strict,
      reason: parsed.reason,
      truncated: parsed.truncated,
      think: parsed.think,
      evidence: facts.evidence,
      evidence_hit: facts.hit,
      evidence_hit_chars: facts.hit_chars,
      span_hit: facts.span_hit,
      p_line_hit: evidence_ref.p_line_hit,
      parser_class: parserClass,
      ...(parsed.score === undefined ? {} : { score: parsed.score }),
    },
  };
}

const sideRow = (item: NoteItem): SideRow => ({
  verdict: item.verdicts.verdict,
  strict: item.verdicts.strict,
  reason: item.verdicts.reason as SideRow["reason"],
  truncated: item.verdicts.truncated,
});
const MISSING: NoteItem["verdicts"] = {
  verdict: null,
  strict: null,
  reason: "api_error",
  truncated: false,
  think: false,
  evidence: false,
  evidence_hit: false,
  evidence_hit_chars: false,
  span_hit: false,
  p_line_hit: false,
  parser_class: "api_error",
};

/** Pair rows in the order pairs first appear; a side with no item counts as an API error (no reply). */
export function pairRows(items: NoteItem[]): PairRow[] {
  const byPair = new Map<string, { error?: NoteItem; clean?: NoteItem }>();
  for (const item of items) {
    const pairId = item.meta.pair_id;
    if (!byPair.has(pairId)) byPair.set(pairId, {});
    byPair.get(pairId)![item.meta.side] = item;
  }
  return [...byPair].map(([pair_id, { error, clean }]) => {
    const any = (error ?? clean)!;
    const errorItem = error ?? { ...any, verdicts: MISSING };
    const cleanItem = clean ?? { ...any, verdicts: MISSING };
    return {
      pair_id,
      category: any.meta.category,
      rule: any.meta.rule,
      condition: any.meta.condition,
      edited_line: any.meta.edited_line,
      exposed: any.meta.exposed,
      e: sideRow(errorItem),
      c: sideRow(cleanItem),
      ev: {
        e_evidence: errorItem.verdicts.evidence,
        c_evidence: cleanItem.verdicts.evidence,
        e_hit: errorItem.verdicts.evidence_hit,
        c_hit: cleanItem.verdicts.evidence_hit,
        e_hit_chars: errorItem.verdicts.evidence_hit_chars,
        span_hit: errorItem.verdicts.span_hit,
        p_line_hit: errorItem.verdicts.p_line_hit,
      },
      ...scoresOf(errorItem, cleanItem),
    };
  });
}

const scoresOf = (error: NoteItem, clean: NoteItem): Pick<PairRow, "scores"> =>
  error.verdicts.score === undefined || clean.verdicts.score === undefined
    ? {}
    : { scores: { e: error.verdicts.score, c: clean.verdicts.score } };

/** Point values of every reported metric, the breakdowns and the counts: the run's tables. */
export function summary(rows: PairRow[], items: NoteItem[]): Record<string, Json> {
  const metrics: Record<string, Json> = {};
  for (const metric of reportedMetrics()) metrics[metric.name] = metric.fn(rows);
  const keys: BreakdownKey[] = ["category", "rule", "condition", "edited_line"];
  const count = (predicate: (item: NoteItem) => boolean) => items.filter(predicate).length;
  const ours = count((item) => OURS.has(item.verdicts.parser_class));
  const replied = count((item) => item.verdicts.reason !== "api_error");
  return {
    // Shown by build, check and report: how much of the run rests on our reading where the page is silent.
    // None when no reply was (a built-in baseline's replies are all in the strict format): nothing to say.
    notices: ours
      ? [
          `${ours} of ${replied} replies were read by a parser rule of medbench's own choice, ` +
            "where the task " +
            "document is silent (per class: tables.counts.parser_classes; docs/protocols/note-errors.md)",
        ]
      : [],
    pairs: rows.length,
    notes: items.length,
    synthetic: items.some((item) => item.meta.synthetic),
    metrics,
    breakdowns: Object.fromEntries(
      keys.map((breakdownKey) => [breakdownKey, breakdown(rows, breakdownKey) as unknown as Json]),
    ),
    counts: {
      api_errors: count((item) => item.verdicts.reason === "api_error"),
      truncated: count((item) => item.verdicts.truncated),
      template_echo: count((item) => item.verdicts.reason === "template_echo"),
      no_error_line: count((item) => item.verdicts.reason === "no_error_line"),
      truncated_no_verdict: count((item) => item.verdicts.reason === "truncated"),
      think_blocks: count((item) => item.verdicts.think),
      // Replies per parser class (tasks/note-errors/parser-classes.ts), and those read by our choice.
      parser_classes: Object.fromEntries(
        PARSER_CLASSES.map((entry) => [entry.id, count((item) => item.verdicts.parser_class === entry.id)]),
      ),
      parser_our_choice: ours,
      parse_failures_error: count((item) => item.meta.side === "error" && isFailure(item)),
      parse_failures_clean: count((item) => item.meta.side === "clean" && isFailure(item)),
    },
  };
}
const isFailure = (item: NoteItem) => item.verdicts.verdict === null && item.verdicts.reason !== "api_error";
