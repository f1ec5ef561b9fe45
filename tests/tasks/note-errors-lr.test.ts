// The conjunction baseline against scikit-learn: tokens, vocabulary, coefficients, scores and predictions
// from tests/data/note-errors/lr-fixture.json (written once by scripts/reference/note_errors_lr.py, sklearn
// 1.2.1).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { REPO } from "../support/helpers.js";
import { codePointCompare, sklearnTokens, wordNgrams } from "../../tasks/note-errors/features.js";
import { conjunctionScores, conjunctionVerdict, fitConjunction } from "../../tasks/note-errors/baselines.js";
import { readPairs } from "../../tasks/note-errors/pairs.js";

interface Fixture {
  tokens: { text: string; tokens: string[]; ngrams: string[] }[];
  vocabulary: string[];
  coef: number[];
  intercept: number;
  threshold: number;
  train_scores: number[];
  test_scores: number[];
  test_predictions: number[];
}
const fixture = JSON.parse(
  readFileSync(resolve(REPO, "tests/data/note-errors/lr-fixture.json"), "utf8"),
) as Fixture;
const sample = (split: string) => {
  const file = `specs/note-errors/sample/pairs_${split}.jsonl`;
  return readPairs(readFileSync(resolve(REPO, file), "utf8"), file);
};

describe("tokens: scikit-learn's (?u)\\b\\w\\w+\\b after lower-casing, on Korean and mixed text", () => {
  it.each(fixture.tokens.map((t) => [t.text, t] as const))("%j", (_, t) => {
    expect(sklearnTokens(t.text)).toEqual(t.tokens);
    expect(wordNgrams(sklearnTokens(t.text), 1, 2)).toEqual(t.ngrams);
  });
  it("JavaScript's own \\w would not do (the reason for the Unicode classes)", () => {
    expect("혈당 조절".match(/\b\w\w+\b/gu)).toBeNull();
    expect(sklearnTokens("혈당 조절")).toEqual(["혈당", "조절"]);
  });
  it("sorts by code point, as Python's sorted() does", () => {
    expect(["\u{1F600}", "\uFF21"].sort(codePointCompare)).toEqual(["\uFF21", "\u{1F600}"]);
    expect(["\u{1F600}", "\uFF21"].sort()).toEqual(["\u{1F600}", "\uFF21"]); // UTF-16 order differs
  });
});

describe("the conjunction LR (C = 10) fitted on the sample's train pairs agrees with scikit-learn", () => {
  const model = fitConjunction(sample("train"));
  it("has the same vocabulary", () => {
    expect(model.vocabulary).toEqual(fixture.vocabulary);
  });
  it("converges", () => {
    expect(model.gradient).toBeLessThan(1e-8);
  });
  it("has the same coefficients and intercept (to 1e-6)", () => {
    let worst = 0;
    model.coef.forEach((c, i) => (worst = Math.max(worst, Math.abs(c - fixture.coef[i]!))));
    expect(worst).toBeLessThan(1e-6);
    expect(Math.abs(model.intercept - fixture.intercept)).toBeLessThan(1e-6);
    expect(Math.abs(model.threshold - fixture.threshold)).toBeLessThan(1e-6);
  });
  it("gives the same scores and the same predictions on the test notes", () => {
    const notes = sample("test").flatMap((p) => [
      { note: p.error_note, code: p.header_code },
      { note: p.clean_note, code: p.header_code },
    ]);
    const scores = conjunctionScores(model, notes);
    scores.forEach((s, i) => expect(Math.abs(s - fixture.test_scores[i]!)).toBeLessThan(1e-5));
    expect(scores.map((s) => (conjunctionVerdict(model, s) === "Yes" ? 1 : 0))).toEqual(
      fixture.test_predictions,
    );
  });
});
