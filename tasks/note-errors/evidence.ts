// The evidence-contrast analysis's matching: does a reply's Evidence text point at the reference line?
// is_match (our reading of the code's): the normalised Evidence contains the normalised reference, or covers
// at least 60 % of the reference's words; text with Chinese or Japanese characters (and no Hangul) takes a
// character path instead, Hangul the word path. Character coverage is computed for every text as a check.
import type { EvidenceRow } from "./metrics.js";
import { soapLine, type Pair, type Side, type SoapLine } from "./pairs.js";

export const COVERAGE = 0.6;

/** NFKC, lower case, punctuation to spaces, runs of space to one. */
export function normalise(text: string): string {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}.%/]+/gu, " ")
      // a dot or slash is kept only between digits (7.8, 130/80)
      .replace(/(?<!\p{N})[./]|[./](?!\p{N})/gu, " ")
      .replace(/\s+/g, " ")
      .trim()
  );
}

export const words = (text: string) => normalise(text).split(" ").filter(Boolean);
const HAN_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HANGUL = /\p{Script=Hangul}/u;
/** The code's choice of path: characters for Chinese and Japanese, words otherwise (Hangul included). */
export const usesCharPath = (text: string) => HAN_KANA.test(text) && !HANGUL.test(text);

/** Share of the reference's words found among the Evidence's words (each reference word once). */
export function wordCoverage(evidence: string, reference: string): number {
  const ref = words(reference);
  if (ref.length === 0) return 0;
  const have = new Set(words(evidence));
  return ref.filter((word) => have.has(word)).length / ref.length;
}

/** Share of the reference's non-space characters found in the Evidence, as a multiset. */
export function charCoverage(evidence: string, reference: string): number {
  const ref = [...normalise(reference).replace(/ /g, "")];
  if (ref.length === 0) return 0;
  const have = new Map<string, number>();
  for (const ch of normalise(evidence).replace(/ /g, "")) have.set(ch, (have.get(ch) ?? 0) + 1);
  let hit = 0;
  for (const ch of ref) {
    const left = have.get(ch) ?? 0;
    if (left > 0) {
      hit++;
      have.set(ch, left - 1);
    }
  }
  return hit / ref.length;
}

export function isMatch(evidence: string, reference: string): boolean {
  const evidenceText = normalise(evidence),
    referenceText = normalise(reference);
  if (referenceText === "" || evidenceText === "") return false;
  if (evidenceText.includes(referenceText)) return true;
  return usesCharPath(reference)
    ? charCoverage(evidence, reference) >= COVERAGE
    : wordCoverage(evidence, reference) >= COVERAGE;
}
export function isMatchChars(evidence: string, reference: string): boolean {
  const evidenceText = normalise(evidence),
    referenceText = normalise(reference);
  if (referenceText === "" || evidenceText === "") return false;
  return evidenceText.includes(referenceText) || charCoverage(evidence, reference) >= COVERAGE;
}

/** The reference texts of one side: the text of each reference line (label dropped) on that side's note. */
export function referenceTexts(pair: Pair, side: Side): string[] {
  const note = side === "error" ? pair.error_note : pair.clean_note;
  return pair.reference_lines
    .map((line: SoapLine) => soapLine(note, line))
    .filter((text): text is string => !!text);
}

/**
 * What the evidence analysis compares a reply's Evidence with. It travels on the request (which holds the
 * note anyway) and never into items: the scorer turns it into booleans.
 */
export interface EvidenceRef {
  reference: string[]; // this side's reference line(s), label dropped
  inserted: string[]; // this side's text at the edited span(s)
  p_line_hit: boolean; // quoting this note's P line would match its reference
}

export function evidenceRef(pair: Pair, side: Side): EvidenceRef {
  const reference = referenceTexts(pair, side);
  const pLine = soapLine(side === "error" ? pair.error_note : pair.clean_note, "P");
  return {
    reference,
    inserted: pair.edits.map((e) => (side === "error" ? e.error_text : e.clean_text)).filter(Boolean),
    p_line_hit: pLine !== null && reference.some((referenceLine) => isMatch(pLine, referenceLine)),
  };
}

export interface SideEvidence {
  evidence: boolean; // the reply has an Evidence text
  hit: boolean; // it matches a reference line (is_match)
  hit_chars: boolean; // the same with character coverage (the check)
  span_hit: boolean; // it contains the text at the edited span
}

export function sideEvidence(evidence: string | null, ref: EvidenceRef): SideEvidence {
  if (evidence === null) return { evidence: false, hit: false, hit_chars: false, span_hit: false };
  const norm = normalise(evidence);
  return {
    evidence: true,
    hit: ref.reference.some((referenceLine) => isMatch(evidence, referenceLine)),
    hit_chars: ref.reference.some((referenceLine) => isMatchChars(evidence, referenceLine)),
    span_hit: ref.inserted.length > 0 && ref.inserted.some((span) => norm.includes(normalise(span))),
  };
}

/** The pair-level facts, from both sides' Evidence. */
export function evidenceRow(pair: Pair, eEvidence: string | null, cEvidence: string | null): EvidenceRow {
  const eRef = evidenceRef(pair, "error");
  const errorSide = sideEvidence(eEvidence, eRef),
    cleanSide = sideEvidence(cEvidence, evidenceRef(pair, "clean"));
  return {
    e_evidence: errorSide.evidence,
    c_evidence: cleanSide.evidence,
    e_hit: errorSide.hit,
    c_hit: cleanSide.hit,
    e_hit_chars: errorSide.hit_chars,
    span_hit: errorSide.span_hit,
    p_line_hit: eRef.p_line_hit,
  };
}
