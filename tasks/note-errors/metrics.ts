// Every reported metric as a function of per-pair rows, so that the bootstrap can resample pairs and call the
// same function on each resample. Definitions (and where the document is silent, our choices) are in
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
}

export type Parser = "tolerant" | "strict";
const v = (s: SideRow, parser: Parser) => (parser === "strict" ? s.strict : s.verdict);
const ratio = (num: number, den: number): number | null => (den === 0 ? null : num / den);

// ---- pair outcomes ----------------------------------------------------------------------------------------
export type Outcome = "both_correct" | "both_yes" | "both_no" | "both_wrong" | "no_verdict";
export function outcome(r: PairRow, parser: Parser = "tolerant"): Outcome {
  const e = v(r.e, parser),
    c = v(r.c, parser);
  if (e === null || c === null) return "no_verdict";
  if (e === "Yes") return c === "No" ? "both_correct" : "both_yes";
  return c === "No" ? "both_no" : "both_wrong";
}
export const outcomeShare =
  (o: Outcome, parser: Parser = "tolerant") =>
  (rows: PairRow[]) =>
    ratio(rows.filter((r) => outcome(r, parser) === o).length, rows.length);

/** BCR: a pair with a member without a verdict is not both-correct. */
export const bcr = (rows: PairRow[], parser: Parser = "tolerant") =>
  outcomeShare("both_correct", parser)(rows);

/** BCR over the pairs whose two members both have a verdict (the paper's text: such pairs are skipped). */
export function bcrSkip(rows: PairRow[]): number | null {
  const kept = rows.filter((r) => outcome(r) !== "no_verdict");
  return ratio(kept.filter((r) => outcome(r) === "both_correct").length, kept.length);
}

// ---- pointwise metrics: notes with a verdict, error notes positive ----------------------------------------
export interface Confusion {
  tp: number;
  fn: number;
  tn: number;
  fp: number;
}
export function confusion(rows: PairRow[], parser: Parser = "tolerant"): Confusion {
  const m = { tp: 0, fn: 0, tn: 0, fp: 0 };
  for (const r of rows) {
    const e = v(r.e, parser),
      c = v(r.c, parser);
    if (e === "Yes") m.tp++;
    else if (e === "No") m.fn++;
    if (c === "No") m.tn++;
    else if (c === "Yes") m.fp++;
  }
  return m;
}
export const sensitivity = (rows: PairRow[]) => {
  const m = confusion(rows);
  return ratio(m.tp, m.tp + m.fn);
};
export const specificity = (rows: PairRow[]) => {
  const m = confusion(rows);
  return ratio(m.tn, m.tn + m.fp);
};
export const precision = (rows: PairRow[]) => {
  const m = confusion(rows);
  return ratio(m.tp, m.tp + m.fp);
};
export function balancedAccuracy(rows: PairRow[]): number | null {
  const s = sensitivity(rows),
    p = specificity(rows);
  return s === null || p === null ? null : (s + p) / 2;
}
export function f1(rows: PairRow[]): number | null {
  const m = confusion(rows);
  return ratio(2 * m.tp, 2 * m.tp + m.fp + m.fn);
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
  const m = confusion(rows);
  return ratio(m.tp + m.fp, m.tp + m.fp + m.tn + m.fn);
}
export function accuracy(rows: PairRow[]): number | null {
  const m = confusion(rows);
  return ratio(m.tp + m.tn, m.tp + m.tn + m.fp + m.fn);
}
/** compute_metrics's per-category rows: accuracy over both notes, recall over error notes. */
export const categoryAccuracy = (category: string) => (rows: PairRow[]) =>
  accuracy(rows.filter((r) => r.category === category));
export const categoryRecall = (category: string) => (rows: PairRow[]) =>
  sensitivity(rows.filter((r) => r.category === category));

// ---- independence -----------------------------------------------------------------------------------------
export function expectedBcr(rows: PairRow[]): number | null {
  const s = sensitivity(rows),
    p = specificity(rows);
  return s === null || p === null ? null : s * p;
}
export function independenceRatio(rows: PairRow[]): number | null {
  const b = bcr(rows),
    e = expectedBcr(rows);
  return b === null || e === null || e === 0 ? null : b / e;
}

// ---- failures ---------------------------------------------------------------------------------------------
/** Share of one side's notes whose reply came back but gave no verdict (API errors are counted apart). */
export const parseFailureRate = (side: "e" | "c") => (rows: PairRow[]) =>
  ratio(rows.filter((r) => r[side].verdict === null && r[side].reason !== "api_error").length, rows.length);
export const truncatedRate = (rows: PairRow[]) =>
  ratio(
    rows.reduce((n, r) => n + (r.e.truncated ? 1 : 0) + (r.c.truncated ? 1 : 0), 0),
    2 * rows.length,
  );
export const apiErrorRate = (rows: PairRow[]) =>
  ratio(
    rows.reduce((n, r) => n + (r.e.reason === "api_error" ? 1 : 0) + (r.c.reason === "api_error" ? 1 : 0), 0),
    2 * rows.length,
  );

// ---- imputation -------------------------------------------------------------------------------------------
/**
 * The code's random-assignment imputation, as we read it: every note without a verdict gets Yes with the
 * run's pooled flag rate (one rate fitted on both sides of the run itself), drawn with Python's random seeded
 * 42, error note before twin, pair by pair; BCR is averaged over 100 such draws. The generator is seeded
 * afresh for every evaluation, so the statistic is a function of the rows (a bootstrap resample included).
 */
export function bcrImputedCode(rows: PairRow[], draws = 100, seed = 42): number | null {
  if (rows.length === 0) return null;
  const rate = flagRate(rows) ?? 0.5;
  const rng = new PyRandom(seed);
  let total = 0;
  for (let d = 0; d < draws; d++) {
    let both = 0;
    for (const r of rows) {
      const e = r.e.verdict ?? (rng.random() < rate ? "Yes" : "No");
      const c = r.c.verdict ?? (rng.random() < rate ? "Yes" : "No");
      if (e === "Yes" && c === "No") both++;
    }
    total += both / rows.length;
  }
  return total / draws;
}

/**
 * The corrected imputation: a missing error-note verdict is Yes with the run's sensitivity and a missing twin
 * verdict is No with its specificity (each side's own rate), and the expectation is taken exactly instead of
 * by draws: a pair missing its error verdict counts sens × [twin No], its twin verdict [error Yes] × spec,
 * both: sens × spec.
 */
export function bcrImputedCorrected(rows: PairRow[]): number | null {
  if (rows.length === 0) return null;
  const s = sensitivity(rows) ?? 0.5,
    p = specificity(rows) ?? 0.5;
  let sum = 0;
  for (const r of rows) {
    const pe = r.e.verdict === null ? s : r.e.verdict === "Yes" ? 1 : 0;
    const pc = r.c.verdict === null ? p : r.c.verdict === "No" ? 1 : 0;
    sum += pe * pc;
  }
  return sum / rows.length;
}

// ---- evidence-contrast analysis ---------------------------------------------------------------------------
export type EcaCategory = "A" | "B" | "C" | "D" | "E" | "X";
/** Over pairs flagged on both sides: A both hit, B error only, C twin only, D neither, E one side without
 * Evidence (extraction failed), X neither side has Evidence. */
export function ecaCategory(r: PairRow): EcaCategory | null {
  if (outcome(r) !== "both_yes") return null;
  const { e_evidence, c_evidence, e_hit, c_hit } = r.ev;
  if (!e_evidence && !c_evidence) return "X";
  if (!e_evidence || !c_evidence) return "E";
  return e_hit ? (c_hit ? "A" : "B") : c_hit ? "C" : "D";
}
export const ecaShare = (cat: EcaCategory) => (rows: PairRow[]) => {
  const flagged = rows.filter((r) => ecaCategory(r) !== null);
  return ratio(flagged.filter((r) => ecaCategory(r) === cat).length, flagged.length);
};
/** TP localisation: of both-flagged pairs with Evidence on the error side, the share whose Evidence hits. */
export function tpLocalisation(rows: PairRow[]): number | null {
  const f = rows.filter((r) => outcome(r) === "both_yes" && r.ev.e_evidence);
  return ratio(f.filter((r) => r.ev.e_hit).length, f.length);
}
/** FP correction: BCR with the both-flagged pairs of category B (error localised, the twin's flag elsewhere)
 * counted as both-correct. */
export function bcrFpCorrected(rows: PairRow[]): number | null {
  return ratio(
    rows.filter((r) => outcome(r) === "both_correct" || ecaCategory(r) === "B").length,
    rows.length,
  );
}
/** Flagged error notes (any pair) whose Evidence matches the reference line(s). */
const flaggedError = (rows: PairRow[]) => rows.filter((r) => r.e.verdict === "Yes");
export const flagLocalisation = (rows: PairRow[]) => {
  const f = flaggedError(rows);
  return ratio(f.filter((r) => r.ev.e_hit).length, f.length);
};
export const flagLocalisationChars = (rows: PairRow[]) => {
  const f = flaggedError(rows);
  return ratio(f.filter((r) => r.ev.e_hit_chars).length, f.length);
};
export const spanHit = (rows: PairRow[]) => {
  const f = flaggedError(rows);
  return ratio(f.filter((r) => r.ev.span_hit).length, f.length);
};
/** The P-line baseline: flag localisation if every error note were flagged quoting its P line. */
export const pLineBaseline = (rows: PairRow[]) =>
  ratio(rows.filter((r) => r.ev.p_line_hit).length, rows.length);

// ---- the declared list -----------------------------------------------------------------------------------
export interface MetricDef {
  name: string;
  label: string;
  fn: (rows: PairRow[]) => number | null;
  unit?: "proportion" | "score";
}

export const CATEGORIES = ["diagnosis", "lab", "pharmacotherapy"] as const;

/** metrics.reported, in the order the results show them (the primary first). */
export function reportedMetrics(): MetricDef[] {
  const m = (name: string, label: string, fn: MetricDef["fn"], unit?: MetricDef["unit"]): MetricDef => ({
    name,
    label,
    fn,
    ...(unit ? { unit } : {}),
  });
  return [
    m("bcr", "BCR (both correct; a pair without a verdict is not)", (r) => bcr(r)),
    m("bcr_strict", "BCR, strict parser", (r) => bcr(r, "strict")),
    m("bcr_skip", "BCR, pairs without a verdict skipped", bcrSkip),
    m("bcr_unexposed", "BCR without the pairs the item check exposed", (r) =>
      bcr(r.filter((x) => !x.exposed)),
    ),
    m("bcr_imputed_code", "BCR, the code's random imputation (100 draws, seed 42)", (r) => bcrImputedCode(r)),
    m("bcr_imputed_corrected", "BCR, corrected imputation (side rates, exact)", bcrImputedCorrected),
    m("sensitivity", "sensitivity (error notes flagged)", sensitivity),
    m("specificity", "specificity (twins passed)", specificity),
    m("balanced_accuracy", "balanced accuracy", balancedAccuracy),
    m("f1", "F1 (error notes positive)", f1),
    m("precision", "precision", precision),
    m("mcc", "MCC", mcc, "score"),
    m("flag_rate", "flag rate (notes called Error: Yes)", flagRate),
    m("accuracy", "compute_metrics accuracy (notes)", accuracy),
    ...CATEGORIES.flatMap((c) => [
      m(`accuracy_${c}`, `compute_metrics accuracy, ${c}`, categoryAccuracy(c)),
      m(`recall_${c}`, `compute_metrics recall on error notes, ${c}`, categoryRecall(c)),
    ]),
    m("both_correct", "pairs both correct", outcomeShare("both_correct")),
    m("both_yes", "pairs both Yes", outcomeShare("both_yes")),
    m("both_no", "pairs both No", outcomeShare("both_no")),
    m("both_wrong", "pairs both wrong", outcomeShare("both_wrong")),
    m("no_verdict_pairs", "pairs with a member without a verdict", outcomeShare("no_verdict")),
    m("expected_bcr", "expected BCR under independence (sens × spec)", expectedBcr),
    m("independence_ratio", "independence ratio (BCR / sens × spec)", independenceRatio, "score"),
    m("parse_failures_error", "parse failures, error notes", parseFailureRate("e")),
    m("parse_failures_clean", "parse failures, twins", parseFailureRate("c")),
    // Rates, named apart from the run's own counts (metrics.truncated, metrics.api_errors).
    m("truncated_rate", "truncated replies (finish_reason length), share of notes", truncatedRate),
    m("api_error_rate", "API errors, share of notes", apiErrorRate),
    m("eca_A", "ECA A: both sides hit (of pairs flagged on both sides)", ecaShare("A")),
    m("eca_B", "ECA B: error side hit only", ecaShare("B")),
    m("eca_C", "ECA C: twin side hit only", ecaShare("C")),
    m("eca_D", "ECA D: neither side hit", ecaShare("D")),
    m("eca_E", "ECA E: Evidence missing on one side", ecaShare("E")),
    m("eca_X", "ECA X: no Evidence on either side", ecaShare("X")),
    m("tp_localisation", "TP localisation (both flagged, error Evidence hits)", tpLocalisation),
    m("bcr_fp_corrected", "BCR, FP-corrected (ECA B counted)", bcrFpCorrected),
    m(
      "flag_localisation",
      "flag localisation (flagged error notes, Evidence on the edited line)",
      flagLocalisation,
    ),
    m("flag_localisation_chars", "flag localisation, character coverage (check)", flagLocalisationChars),
    m("span_hit", "span hit (Evidence contains the inserted text)", spanHit),
    m("p_line_baseline", "P-line baseline (flag localisation of quoting the P line)", pLineBaseline),
  ];
}

// ---- breakdowns ---------------------------------------------------------------------------
export type BreakdownKey = "category" | "rule" | "condition" | "edited_line";
export function breakdown(rows: PairRow[], key: BreakdownKey) {
  const groups = new Map<string, PairRow[]>();
  for (const r of rows) {
    const k = r[key];
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  return Object.fromEntries(
    [...groups]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, g]) => [
        k,
        { n: g.length, bcr: bcr(g), sensitivity: sensitivity(g), specificity: specificity(g) },
      ]),
  );
}
