// Every reported metric as a function of per-pair rows, so that the bootstrap can resample pairs and call
// the same function on each resample. Definitions (and where the document is silent, our choices) are in
// docs/protocols/note-errors.md.
import { PyRandom } from "../../src/stats/mt19937.js";
import type { NoVerdictReason, Verdict } from "./verdict.js";

export interface SideRow {
  verdict: Verdict | null; // tolerant parser, after the document's rules
  strict: Verdict | null; // strict parser, after the same rules
  reason: NoVerdictReason | null;
  truncated: boolean;
}

/** The evidence analysis's facts about one pair (evidence.ts computes them). */
export interface EvidenceRow {
  e_evidence: boolean; // the error note's reply has an Evidence text
  c_evidence: boolean;
  e_hit: boolean; // the error note's Evidence matches its reference line(s) (is_match)
  c_hit: boolean; // the twin's Evidence matches the twin's reference line(s)
  e_hit_chars: boolean; // the same as e_hit with character coverage (the check)
  span_hit: boolean; // the error note's Evidence contains the inserted text
  p_line_hit: boolean; // quoting the error note's P line would match its reference
}

export interface PairRow {
  pair_id: string;
  category: string;
  rule: string;
  condition: string;
  edited_line: string;
  exposed: boolean;
  e: SideRow; // the error note
  c: SideRow; // the clean twin
  ev: EvidenceRow;
  /** A score-reading probe's decision scores for the error note and its twin. */
  scores?: { e: number; c: number };
}

export type Parser = "tolerant" | "strict";
const verdictOf = (side: SideRow, parser: Parser) => (parser === "strict" ? side.strict : side.verdict);
const ratio = (num: number, den: number): number | null => (den === 0 ? null : num / den);

// ---- pair outcomes ---------------------------------------------------------------------------------------
export type Outcome = "both_correct" | "both_yes" | "both_no" | "both_wrong" | "no_verdict";
export function outcome(row: PairRow, parser: Parser = "tolerant"): Outcome {
  const errorVerdict = verdictOf(row.e, parser),
    twinVerdict = verdictOf(row.c, parser);
  if (errorVerdict === null || twinVerdict === null) return "no_verdict";
  if (errorVerdict === "Yes") return twinVerdict === "No" ? "both_correct" : "both_yes";
  return twinVerdict === "No" ? "both_no" : "both_wrong";
}
export const outcomeShare =
  (wanted: Outcome, parser: Parser = "tolerant") =>
  (rows: PairRow[]) =>
    ratio(rows.filter((row) => outcome(row, parser) === wanted).length, rows.length);

/** BCR: a pair with a member without a verdict is not both-correct. */
export const bcr = (rows: PairRow[], parser: Parser = "tolerant") =>
  outcomeShare("both_correct", parser)(rows);

/** BCR over the pairs whose two members both have a verdict (the paper's text: such pairs are skipped). */
export function bcrSkip(rows: PairRow[]): number | null {
  const kept = rows.filter((row) => outcome(row) !== "no_verdict");
  return ratio(kept.filter((row) => outcome(row) === "both_correct").length, kept.length);
}

// ---- pointwise metrics: notes with a verdict, error notes positive ---------------------------------------
export interface Confusion {
  tp: number;
  fn: number;
  tn: number;
  fp: number;
}
export function confusion(rows: PairRow[], parser: Parser = "tolerant"): Confusion {
  const counts = { tp: 0, fn: 0, tn: 0, fp: 0 };
  for (const row of rows) {
    const errorVerdict = verdictOf(row.e, parser),
      twinVerdict = verdictOf(row.c, parser);
    if (errorVerdict === "Yes") counts.tp++;
    else if (errorVerdict === "No") counts.fn++;
    if (twinVerdict === "No") counts.tn++;
    else if (twinVerdict === "Yes") counts.fp++;
  }
  return counts;
}
export const sensitivity = (rows: PairRow[]) => {
  const counts = confusion(rows);
  return ratio(counts.tp, counts.tp + counts.fn);
};
export const specificity = (rows: PairRow[]) => {
  const counts = confusion(rows);
  return ratio(counts.tn, counts.tn + counts.fp);
};
export const precision = (rows: PairRow[]) => {
  const counts = confusion(rows);
  return ratio(counts.tp, counts.tp + counts.fp);
};
export function balancedAccuracy(rows: PairRow[]): number | null {
  const sens = sensitivity(rows),
    spec = specificity(rows);
  return sens === null || spec === null ? null : (sens + spec) / 2;
}
export function f1(rows: PairRow[]): number | null {
  const counts = confusion(rows);
  return ratio(2 * counts.tp, 2 * counts.tp + counts.fp + counts.fn);
}
/** Matthews correlation; 0 when a margin is empty (scikit-learn's convention). */
export function mcc(rows: PairRow[]): number | null {
  const { tp, tn, fp, fn } = confusion(rows);
  if (tp + tn + fp + fn === 0) return null;
  const den = Math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn));
  return den === 0 ? 0 : (tp * tn - fp * fn) / den;
}
/** Share of notes with a verdict that were flagged (Error: Yes), both sides pooled. */
export function flagRate(rows: PairRow[]): number | null {
  const counts = confusion(rows);
  return ratio(counts.tp + counts.fp, counts.tp + counts.fp + counts.tn + counts.fn);
}
export function accuracy(rows: PairRow[]): number | null {
  const counts = confusion(rows);
  return ratio(counts.tp + counts.tn, counts.tp + counts.tn + counts.fp + counts.fn);
}
/** compute_metrics's per-category rows: accuracy over both notes, recall over error notes. */
export const categoryAccuracy = (category: string) => (rows: PairRow[]) =>
  accuracy(rows.filter((row) => row.category === category));
export const categoryRecall = (category: string) => (rows: PairRow[]) =>
  sensitivity(rows.filter((row) => row.category === category));

// ---- independence ----------------------------------------------------------------------------------------
export function expectedBcr(rows: PairRow[]): number | null {
  const sens = sensitivity(rows),
    spec = specificity(rows);
  return sens === null || spec === null ? null : sens * spec;
}
export function independenceRatio(rows: PairRow[]): number | null {
  const observed = bcr(rows),
    expected = expectedBcr(rows);
  return observed === null || expected === null || expected === 0 ? null : observed / expected;
}

// ---- probes ----------------------------------------------------------------------------------------------
/**
 * Paired accuracy of a score-reading probe (the leak gates' measure): the share of pairs whose error note
 * scores above its twin, a tie counting half. Undefined unless every pair has both scores.
 */
export function pairedAccuracy(rows: PairRow[]): number | null {
  if (rows.length === 0 || rows.some((row) => row.scores === undefined)) return null;
  let sum = 0;
  for (const { scores } of rows) sum += scores!.e > scores!.c ? 1 : scores!.e === scores!.c ? 0.5 : 0;
  return sum / rows.length;
}
/**
 * BCR's null: the expected BCR when each pair's two notes are swapped at random, so that only a reading of
 * which note is the error counts: (both correct + both wrong) / 2 (exact, instead of permutation draws).
 */
export function bcrSwapNull(rows: PairRow[]): number | null {
  if (rows.length === 0) return null;
  return (outcomeShare("both_correct")(rows)! + outcomeShare("both_wrong")(rows)!) / 2;
}

// ---- failures --------------------------------------------------------------------------------------------
/** Share of one side's notes whose reply came back but gave no verdict (API errors are counted apart). */
export const parseFailureRate = (side: "e" | "c") => (rows: PairRow[]) =>
  ratio(
    rows.filter((row) => row[side].verdict === null && row[side].reason !== "api_error").length,
    rows.length,
  );
export const truncatedRate = (rows: PairRow[]) =>
  ratio(
    rows.reduce((sum, row) => sum + (row.e.truncated ? 1 : 0) + (row.c.truncated ? 1 : 0), 0),
    2 * rows.length,
  );
export const apiErrorRate = (rows: PairRow[]) =>
  ratio(
    rows.reduce(
      (sum, row) => sum + (row.e.reason === "api_error" ? 1 : 0) + (row.c.reason === "api_error" ? 1 : 0),
      0,
    ),
    2 * rows.length,
  );

// ---- imputation ------------------------------------------------------------------------------------------
/**
 * The code's random-assignment imputation, as the page describes it ("asymmetrically, fitted on the run
 * itself"): a note without a verdict gets Yes with its own side's flag rate on the run, the error notes' for
 * an error note (the share of error notes with a verdict called Yes) and the twins' for a twin, drawn with
 * Python's random seeded 42, error note before twin, pair by pair; BCR is averaged over 100 such draws. The
 * generator is seeded afresh for every evaluation, so the statistic is a function of the rows (a bootstrap
 * resample included). A side with no verdict at all takes 0.5.
 */
export function bcrImputedCode(rows: PairRow[], draws = 100, seed = 42): number | null {
  if (rows.length === 0) return null;
  const errorRate = sideFlagRate(rows, "e") ?? 0.5;
  const twinRate = sideFlagRate(rows, "c") ?? 0.5;
  const rng = new PyRandom(seed);
  let total = 0;
  for (let draw = 0; draw < draws; draw++) {
    let both = 0;
    for (const row of rows) {
      const errorVerdict = row.e.verdict ?? (rng.random() < errorRate ? "Yes" : "No");
      const twinVerdict = row.c.verdict ?? (rng.random() < twinRate ? "Yes" : "No");
      if (errorVerdict === "Yes" && twinVerdict === "No") both++;
    }
    total += both / rows.length;
  }
  return total / draws;
}

/** Share of one side's notes with a verdict that were called Yes (error notes: sensitivity;
 *  twins: 1 − spec). */
export function sideFlagRate(rows: PairRow[], side: "e" | "c"): number | null {
  const judged = rows.filter((row) => row[side].verdict !== null);
  return ratio(judged.filter((row) => row[side].verdict === "Yes").length, judged.length);
}

/**
 * The corrected imputation: a missing error-note verdict is Yes with the run's sensitivity and a missing
 * twin verdict is No with its specificity (each side's own rate), and the expectation is taken exactly
 * instead of by draws: a pair missing its error verdict counts sens × [twin No], its twin verdict [error
 * Yes] × spec, both: sens × spec.
 */
export function bcrImputedCorrected(rows: PairRow[]): number | null {
  if (rows.length === 0) return null;
  const sens = sensitivity(rows) ?? 0.5,
    spec = specificity(rows) ?? 0.5;
  let sum = 0;
  for (const row of rows) {
    const pe = row.e.verdict === null ? sens : row.e.verdict === "Yes" ? 1 : 0;
    const pc = row.c.verdict === null ? spec : row.c.verdict === "No" ? 1 : 0;
    sum += pe * pc;
  }
  return sum / rows.length;
}

// ---- evidence-contrast analysis --------------------------------------------------------------------------
export type EcaCategory = "A" | "B" | "C" | "D" | "E" | "X";
/** Over pairs flagged on both sides: A both hit, B error only, C twin only, D neither, E one side without
 * Evidence (extraction failed), X neither side has Evidence. */
export function ecaCategory(row: PairRow): EcaCategory | null {
  if (outcome(row) !== "both_yes") return null;
  const { e_evidence, c_evidence, e_hit, c_hit } = row.ev;
  if (!e_evidence && !c_evidence) return "X";
  if (!e_evidence || !c_evidence) return "E";
  return e_hit ? (c_hit ? "A" : "B") : c_hit ? "C" : "D";
}
export const ecaShare = (cat: EcaCategory) => (rows: PairRow[]) => {
  const flagged = rows.filter((row) => ecaCategory(row) !== null);
  return ratio(flagged.filter((row) => ecaCategory(row) === cat).length, flagged.length);
};
/** TP localisation: of both-flagged pairs with Evidence on the error side, the share whose Evidence hits. */
export function tpLocalisation(rows: PairRow[]): number | null {
  const flagged = rows.filter((row) => outcome(row) === "both_yes" && row.ev.e_evidence);
  return ratio(flagged.filter((row) => row.ev.e_hit).length, flagged.length);
}
/** FP correction: BCR with the both-flagged pairs of category B (error localised, the twin's flag elsewhere)
 * counted as both-correct. */
export function bcrFpCorrected(rows: PairRow[]): number | null {
  return ratio(
    rows.filter((row) => outcome(row) === "both_correct" || ecaCategory(row) === "B").length,
    rows.length,
  );
}
/** Flagged error notes (any pair) whose Evidence matches the reference line(s). */
const flaggedError = (rows: PairRow[]) => rows.filter((row) => row.e.verdict === "Yes");
export const flagLocalisation = (rows: PairRow[]) => {
  const flagged = flaggedError(rows);
  return ratio(flagged.filter((row) => row.ev.e_hit).length, flagged.length);
};
export const flagLocalisationChars = (rows: PairRow[]) => {
  const flagged = flaggedError(rows);
  return ratio(flagged.filter((row) => row.ev.e_hit_chars).length, flagged.length);
};
export const spanHit = (rows: PairRow[]) => {
  const flagged = flaggedError(rows);
  return ratio(flagged.filter((row) => row.ev.span_hit).length, flagged.length);
};
/** The P-line baseline: flag localisation if every error note were flagged quoting its P line. */
export const pLineBaseline = (rows: PairRow[]) =>
  ratio(rows.filter((row) => row.ev.p_line_hit).length, rows.length);

// ---- the declared list -----------------------------------------------------------------------------------
export interface MetricDef {
  name: string;
  label: string;
  fn: (rows: PairRow[]) => number | null;
  unit?: "proportion" | "score";
}

export const CATEGORIES = ["diagnosis", "lab", "pharmacotherapy"] as const;

const metric = (name: string, label: string, fn: MetricDef["fn"], unit?: MetricDef["unit"]): MetricDef => ({
  name,
  label,
  fn,
  ...(unit ? { unit } : {}),
});

/** BCR as the document reports it (the primary), and as other readings count it. */
const bcrMetrics = (): MetricDef[] => [
  metric("bcr", "BCR (both correct; a pair without a verdict is not)", (rows) => bcr(rows)),
  metric("bcr_strict", "BCR, strict parser", (rows) => bcr(rows, "strict")),
  metric("bcr_skip", "BCR, pairs without a verdict skipped", bcrSkip),
  metric("bcr_unexposed", "BCR without the pairs the item check exposed", (rows) =>
    bcr(rows.filter((x) => !x.exposed)),
  ),
  metric("bcr_imputed_code", "BCR, the code's random imputation (100 draws, seed 42)", (rows) =>
    bcrImputedCode(rows),
  ),
  metric("bcr_imputed_corrected", "BCR, corrected imputation (side rates, exact)", bcrImputedCorrected),
];

/** Notes with a verdict, error notes positive; compute_metrics's rows per category. */
const pointwiseMetrics = (): MetricDef[] => [
  metric("sensitivity", "sensitivity (error notes flagged)", sensitivity),
  metric("specificity", "specificity (twins passed)", specificity),
  metric("balanced_accuracy", "balanced accuracy", balancedAccuracy),
  metric("f1", "F1 (error notes positive)", f1),
  metric("precision", "precision", precision),
  metric("mcc", "MCC", mcc, "score"),
  metric("flag_rate", "flag rate (notes called Error: Yes)", flagRate),
  metric("accuracy", "compute_metrics accuracy (notes)", accuracy),
  ...CATEGORIES.flatMap((category) => [
    metric(`accuracy_${category}`, `compute_metrics accuracy, ${category}`, categoryAccuracy(category)),
    metric(
      `recall_${category}`,
      `compute_metrics recall on error notes, ${category}`,
      categoryRecall(category),
    ),
  ]),
];

const OUTCOME_METRICS: [name: string, label: string, outcome: Outcome][] = [
  ["both_correct", "pairs both correct", "both_correct"],
  ["both_yes", "pairs both Yes", "both_yes"],
  ["both_no", "pairs both No", "both_no"],
  ["both_wrong", "pairs both wrong", "both_wrong"],
  ["no_verdict_pairs", "pairs with a member without a verdict", "no_verdict"],
];

/** Pair outcomes, the independence check and the failure rates. */
const pairMetrics = (): MetricDef[] => [
  ...OUTCOME_METRICS.map(([name, label, wanted]) => metric(name, label, outcomeShare(wanted))),
  metric("expected_bcr", "expected BCR under independence (sens × spec)", expectedBcr),
  metric(
    "bcr_swap_null",
    "BCR's null: the pair's notes swapped at random ((both correct + both wrong) / 2)",
    bcrSwapNull,
  ),
  metric(
    "paired_accuracy",
    "paired accuracy: error note scored above its twin (score-reading probes)",
    pairedAccuracy,
  ),
  metric("independence_ratio", "independence ratio (BCR / sens × spec)", independenceRatio, "score"),
  metric("parse_failures_error", "parse failures, error notes", parseFailureRate("e")),
  metric("parse_failures_clean", "parse failures, twins", parseFailureRate("c")),
  // Rates, named apart from the run's own counts (metrics.truncated, metrics.api_errors).
  metric("truncated_rate", "truncated replies (finish_reason length), share of notes", truncatedRate),
  metric("api_error_rate", "API errors, share of notes", apiErrorRate),
];

const ECA_LABELS: Record<EcaCategory, string> = {
  A: "ECA A: both sides hit (of pairs flagged on both sides)",
  B: "ECA B: error side hit only",
  C: "ECA C: twin side hit only",
  D: "ECA D: neither side hit",
  E: "ECA E: Evidence missing on one side",
  X: "ECA X: no Evidence on either side",
};

/** The evidence-contrast analysis and the localisation of flags. */
const evidenceMetrics = (): MetricDef[] => [
  ...(Object.entries(ECA_LABELS) as [EcaCategory, string][]).map(([category, label]) =>
    metric(`eca_${category}`, label, ecaShare(category)),
  ),
  metric("tp_localisation", "TP localisation (both flagged, error Evidence hits)", tpLocalisation),
  metric("bcr_fp_corrected", "BCR, FP-corrected (ECA B counted)", bcrFpCorrected),
  metric(
    "flag_localisation",
    "flag localisation (flagged error notes, Evidence on the edited line)",
    flagLocalisation,
  ),
  metric("flag_localisation_chars", "flag localisation, character coverage (check)", flagLocalisationChars),
  metric("span_hit", "span hit (Evidence contains the inserted text)", spanHit),
  metric("p_line_baseline", "P-line baseline (flag localisation of quoting the P line)", pLineBaseline),
];

/** metrics.reported, in the order the results show them (the primary first). */
export function reportedMetrics(): MetricDef[] {
  return [...bcrMetrics(), ...pointwiseMetrics(), ...pairMetrics(), ...evidenceMetrics()];
}

// ---- breakdowns ---------------------------------------------------------------------------
export type BreakdownKey = "category" | "rule" | "condition" | "edited_line";
export function breakdown(rows: PairRow[], key: BreakdownKey) {
  const groups = new Map<string, PairRow[]>();
  for (const row of rows) {
    const groupKey = row[key];
    if (!groups.has(groupKey)) groups.set(groupKey, []);
    groups.get(groupKey)!.push(row);
  }
  return Object.fromEntries(
    [...groups]
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([groupKey, group]) => [
        groupKey,
        {
          n: group.length,
          bcr: bcr(group),
          sensitivity: sensitivity(group),
          specificity: specificity(group),
        },
      ]),
  );
}
