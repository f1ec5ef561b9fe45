// The evidence-contrast analysis's matching: does a reply's Evidence text point at the reference line?
// is_match (our reading of the code's): the normalised Evidence contains the normalised reference, or covers
// at least 60 % of the reference's words; text with Chinese or Japanese characters (and no Hangul) takes a
// character path instead, Hangul the word path. Character coverage is computed for every text as a check.
import type { EvidenceRow } from "./metrics.js";
import { soapLine, type Pair, type Side, type SoapLine } from "./pairs.js";

export const COVERAGE = 0.6;

/** NFKC, lower case, punctuation to spaces, runs of space to one. */
export function normalise(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}.%/]+/gu, " ")
    .replace(/(?<!\p{N})[./]|[./](?!\p{N})/gu, " ") // a dot or slash is kept only between digits (7.8, 130/80)
    .replace(/\s+/g, " ")
    .trim();
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
  return ref.filter((w) => have.has(w)).length / ref.length;
}

/** Share of the reference's non-space characters found in the Evidence, as a multiset. */
export function charCoverage(evidence: string, reference: string): number {
  const ref = [...normalise(reference).replace(/ /g, "")];
  if (ref.length === 0) return 0;
  const have = new Map<string, number>();
  for (const ch of normalise(evidence).replace(/ /g, "")) have.set(ch, (have.get(ch) ?? 0) + 1);
  let hit = 0;
  for (const ch of ref) {
    const n = have.get(ch) ?? 0;
    if (n > 0) {
      hit++;
      have.set(ch, n - 1);
    }
  }
  return hit / ref.length;
}

export function isMatch(evidence: string, reference: string): boolean {
  const e = normalise(evidence),
    r = normalise(reference);
  if (r === "" || e === "") return false;
  if (e.includes(r)) return true;
  return usesCharPath(reference)
    ? charCoverage(evidence, reference) >= COVERAGE
    : wordCoverage(evidence, reference) >= COVERAGE;
}
export function isMatchChars(evidence: string, reference: string): boolean {
  const e = normalise(evidence),
    r = normalise(reference);
  if (r === "" || e === "") return false;
  return e.includes(r) || charCoverage(evidence, reference) >= COVERAGE;
}

/** The reference texts of one side: the text of each reference line (label dropped) on that side's note. */
export function referenceTexts(pair: Pair, side: Side): string[] {
  const note = side === "error" ? pair.error_note : pair.clean_note;
  return pair.reference_lines.map((l: SoapLine) => soapLine(note, l)).filter((t): t is string => !!t);
}

export function evidenceRow(pair: Pair, eEvidence: string | null, cEvidence: string | null): EvidenceRow {
  const eRefs = referenceTexts(pair, "error"),
    cRefs = referenceTexts(pair, "clean");
  const hits = (ev: string | null, refs: string[], f: (e: string, r: string) => boolean) =>
    ev !== null && refs.some((r) => f(ev, r));
  const inserted = pair.edits.map((x) => x.error_text).filter(Boolean);
  const pLine = soapLine(pair.error_note, "P");
  return {
    e_evidence: eEvidence !== null,
    c_evidence: cEvidence !== null,
    e_hit: hits(eEvidence, eRefs, isMatch),
    c_hit: hits(cEvidence, cRefs, isMatch),
    e_hit_chars: hits(eEvidence, eRefs, isMatchChars),
    span_hit:
      eEvidence !== null &&
      inserted.length > 0 &&
      inserted.some((t) => normalise(eEvidence).includes(normalise(t))),
    p_line_hit: pLine !== null && eRefs.some((r) => isMatch(pLine, r)),
  };
}
