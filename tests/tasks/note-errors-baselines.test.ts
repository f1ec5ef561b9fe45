// The four baselines on the synthetic sample, through the same parser and scorer as a model: each gives what
// its definition implies (constant-yes BCR 0 and F1 2/3; prior BCR 0; random = numpy default_rng(0)'s
// draws).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { REPO } from "../support/helpers.js";
import { readPairs } from "../../tasks/note-errors/pairs.js";
import { noteRequests } from "../../tasks/note-errors/prompts.js";
import {
  constantYes,
  conjunctionScores,
  conjunctionVerdict,
  fitConjunction,
  prior,
  randomVerdicts,
  reply,
} from "../../tasks/note-errors/baselines.js";
import { parserClass } from "../../tasks/note-errors/parser-classes.js";
import { parseVerdict } from "../../tasks/note-errors/verdict.js";
import { noteItem, pairRows, type ScoredRequest } from "../../tasks/note-errors/scorer.js";
import * as M from "../../tasks/note-errors/metrics.js";

const read = (split: string) => {
  const f = `specs/note-errors/sample/pairs_${split}.jsonl`;
  return readPairs(readFileSync(resolve(REPO, f), "utf8"), f);
};
const test = read("test");
const prompt = { system: "s", user: "{note}" };
const requests = noteRequests(test, prompt) as unknown as ScoredRequest[];
const rowsOf = (texts: string[]) =>
  pairRows(
    requests.map((r, i) => {
      const reply = { text: texts[i]!, error: null, finish_reason: "stop", reasoning: false };
      const v = parseVerdict(reply);
      return noteItem(r, v, parserClass(reply, v));
    }),
  );

describe("baselines on the sample's test pairs", () => {
  it("medbench/prior: BCR 0, nothing flagged", () => {
    const rows = rowsOf(prior(requests.length));
    expect([M.bcr(rows), M.flagRate(rows), M.specificity(rows)]).toEqual([0, 0, 1]);
  });
  it("medbench/constant-yes: BCR 0, F1 2/3", () => {
    const rows = rowsOf(constantYes(requests.length));
    expect(M.bcr(rows)).toBe(0);
    expect(M.f1(rows)).toBeCloseTo(2 / 3, 15);
    expect(M.bcr(rows, "strict")).toBe(0);
  });
  const fixture = JSON.parse(
    readFileSync(resolve(REPO, "tests/data/note-errors/random-fixture.json"), "utf8"),
  ) as { verdicts: Record<string, "Yes" | "No">; bcr: number };
  it("medbench/random: numpy default_rng(0)'s draws note by note, and BCR near its expected 0.25", () => {
    const v = randomVerdicts(test);
    expect(Object.fromEntries(v)).toEqual(fixture.verdicts);
    const rows = rowsOf(requests.map((r) => reply(v.get(r.id)!, "coin")));
    expect(M.bcr(rows)).toBe(fixture.bcr);
    // within three standard errors of 0.25 (sd of a share of 64 Bernoulli(1/4) pairs: 0.054)
    expect(Math.abs(M.bcr(rows)! - 0.25)).toBeLessThan(3 * Math.sqrt((0.25 * 0.75) / test.length));
  });
  it("medbench/note-errors-conjunction-lr: the fitted model's verdicts, read back by the parser", () => {
    const model = fitConjunction(read("train"));
    const scores = conjunctionScores(
      model,
      test.flatMap((p) => [
        { note: p.error_note, code: p.header_code },
        { note: p.clean_note, code: p.header_code },
      ]),
    );
    const verdicts = scores.map((s) => conjunctionVerdict(model, s));
    const rows = rowsOf(verdicts.map((v) => reply(v, "conjunction LR")));
    expect(rows.flatMap((r) => [r.e.verdict, r.c.verdict])).toEqual(verdicts);
    expect(M.bcr(rows)).toBeGreaterThan(0.25); // it reads the input: the sample's drug × code cues
  });

  // The page's probe row: paired accuracy and BCR's null beside the BCR. Paired accuracy from scikit-learn's
  // own decision scores (tests/data/note-errors/lr-fixture.json), error note before twin.
  it("the conjunction probe row: paired accuracy from scikit-learn's scores, and the swap null", () => {
    const model = fitConjunction(read("train"));
    const notes = test.flatMap((p) => [
      { note: p.error_note, code: p.header_code },
      { note: p.clean_note, code: p.header_code },
    ]);
    const scores = conjunctionScores(model, notes);
    const rows = rowsOf(scores.map((s) => reply(conjunctionVerdict(model, s), "conjunction LR", s)));
    const fixture = JSON.parse(
      readFileSync(resolve(REPO, "tests/data/note-errors/lr-fixture.json"), "utf8"),
    ) as { test_scores: number[] };
    let above = 0;
    for (let i = 0; i < fixture.test_scores.length; i += 2) {
      const [error, twin] = [fixture.test_scores[i]!, fixture.test_scores[i + 1]!];
      above += error > twin ? 1 : error === twin ? 0.5 : 0;
    }
    expect(M.pairedAccuracy(rows)).toBe(above / test.length);
    const share = (e: string, c: string) =>
      rows.filter((r) => r.e.verdict === e && r.c.verdict === c).length / rows.length;
    expect(M.bcrSwapNull(rows)).toBeCloseTo((share("Yes", "No") + share("No", "Yes")) / 2, 15);
    // A run without scores (any model) has no paired accuracy.
    expect(M.pairedAccuracy(rowsOf(scores.map((s) => reply(conjunctionVerdict(model, s), "x"))))).toBe(null);
  });
});
