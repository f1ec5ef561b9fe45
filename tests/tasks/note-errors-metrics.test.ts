// Metrics of the note-errors document as functions of pair rows; each case from a definition.
import { describe, expect, it } from "vitest";
import { meanSd } from "../../src/stats/mean-sd.js";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { REPO } from "../support/helpers.js";
import * as M from "../../tasks/note-errors/metrics.js";
import type { PairRow, SideRow } from "../../tasks/note-errors/metrics.js";
import {
  charCoverage,
  evidenceRow,
  isMatch,
  referenceTexts,
  wordCoverage,
} from "../../tasks/note-errors/evidence.js";
import { readPairs } from "../../tasks/note-errors/pairs.js";

type V = "Yes" | "No" | null;
const side = (v: V, o: Partial<SideRow> = {}): SideRow => ({
  verdict: v,
  strict: v,
  reason: v === null ? "no_error_line" : null,
  truncated: false,
  ...o,
});
const noEvidence = {
  e_evidence: false,
  c_evidence: false,
  e_hit: false,
  c_hit: false,
  e_hit_chars: false,
  span_hit: false,
  p_line_hit: false,
};
let n = 0;
const row = (e: V, c: V, o: Partial<PairRow> = {}): PairRow => ({
  pair_id: `p${n++}`,
  category: "lab",
  rule: "LI01",
  condition: "E11",
  edited_line: "A",
  exposed: false,
  e: side(e),
  c: side(c),
  ev: noEvidence,
  ...o,
});
const rows = (...vs: [V, V][]) => vs.map(([e, c]) => row(e, c));

describe("BCR and pair outcomes", () => {
  const four = rows(["Yes", "No"], ["Yes", "Yes"], ["No", "No"], ["No", "Yes"]);
  it("one pair of each outcome", () => {
    expect(M.bcr(four)).toBe(0.25);
    for (const o of ["both_correct", "both_yes", "both_no", "both_wrong"] as const)
      expect(M.outcomeShare(o)(four)).toBe(0.25);
  });
  it("a pair with a member without a verdict is not both-correct", () => {
    expect(M.bcr(rows(["Yes", "No"], ["Yes", null], [null, "No"]))).toBeCloseTo(1 / 3, 15);
  });
  it("skip: pairs without a verdict leave the denominator", () => {
    expect(M.bcrSkip(rows(["Yes", "No"], ["Yes", null], [null, "No"], ["No", "No"]))).toBe(0.5);
  });
  it("strict: the strict parser's verdicts", () => {
    const r = [row("Yes", "No"), row("Yes", "No", { e: side("Yes", { strict: null }) })];
    expect([M.bcr(r), M.bcr(r, "strict")]).toEqual([1, 0.5]);
  });
  it("without the exposed pairs", () => {
    const r = [row("Yes", "No"), row("No", "No", { exposed: true })];
    const def = M.reportedMetrics().find((m) => m.name === "bcr_unexposed")!;
    expect([M.bcr(r), def.fn(r)]).toEqual([0.5, 1]);
  });
});

describe("pointwise metrics (error notes positive, notes with a verdict)", () => {
  it("constant Yes: BCR 0, sensitivity 1, specificity 0, precision 1/2, F1 2/3, MCC 0, flag rate 1", () => {
    const r = rows(["Yes", "Yes"], ["Yes", "Yes"], ["Yes", "Yes"]);
    expect([M.bcr(r), M.sensitivity(r), M.specificity(r), M.precision(r), M.mcc(r), M.flagRate(r)]).toEqual([
      0, 1, 0, 0.5, 0, 1,
    ]);
    expect(M.f1(r)).toBeCloseTo(2 / 3, 15);
    expect(M.balancedAccuracy(r)).toBe(0.5);
  });
  it("constant No: BCR 0, F1 0, precision undefined", () => {
    const r = rows(["No", "No"], ["No", "No"]);
    expect([M.bcr(r), M.f1(r), M.precision(r), M.sensitivity(r), M.specificity(r)]).toEqual([
      0,
      0,
      null,
      0,
      1,
    ]);
  });
  it("MCC of a perfect and of an inverted detector", () => {
    expect(M.mcc(rows(["Yes", "No"], ["Yes", "No"]))).toBe(1);
    expect(M.mcc(rows(["No", "Yes"], ["No", "Yes"]))).toBe(-1);
  });
  it("notes without a verdict leave the confusion matrix", () => {
    expect(M.confusion(rows(["Yes", null], [null, "No"]))).toEqual({ tp: 1, fn: 0, tn: 1, fp: 0 });
  });
  it("compute_metrics per category: accuracy over both notes, recall over error notes", () => {
    const r = [row("Yes", "Yes", { category: "lab" }), row("No", "No", { category: "diagnosis" })];
    expect([M.categoryAccuracy("lab")(r), M.categoryRecall("lab")(r)]).toEqual([0.5, 1]);
    expect([M.categoryAccuracy("diagnosis")(r), M.categoryRecall("diagnosis")(r)]).toEqual([0.5, 0]);
    expect(M.categoryRecall("pharmacotherapy")(r)).toBeNull();
  });
});

describe("independence", () => {
  it("expected BCR is sens × spec and the ratio BCR over it", () => {
    // sens 3/4, spec 2/4; both correct 2 of 4
    const r = rows(["Yes", "No"], ["Yes", "No"], ["Yes", "Yes"], ["No", "Yes"]);
    expect(M.expectedBcr(r)).toBe(0.375);
    expect(M.independenceRatio(r)).toBeCloseTo(0.5 / 0.375, 15);
  });
});

describe("imputation", () => {
  const r = rows(["Yes", "No"], ["Yes", null], [null, "No"], [null, null]);
  it("corrected: each side's own rate, exact expectation", () => {
    // sens 2/2 = 1, spec 2/2 = 1: every missing verdict is imputed correct
    expect(M.bcrImputedCorrected(r)).toBe(1);
    const r2 = rows(["Yes", "No"], ["No", "Yes"], ["Yes", null], [null, "No"]);
    // sens 2/3, spec 2/3: (1 + 0 + 1·2/3 + 2/3·1) / 4
    expect(M.bcrImputedCorrected(r2)).toBeCloseTo((1 + 0 + 2 / 3 + 2 / 3) / 4, 15);
  });
  it("the code's: Python random seeded 42, 100 draws, each side's flag rate; a function of the rows", () => {
    const a = M.bcrImputedCode(r),
      b = M.bcrImputedCode(r);
    expect(a).toBe(b);
    // error side 2/2 Yes, twin side 0/2 Yes: every missing verdict is imputed correct
    expect(a).toBe(1);
    expect(M.bcrImputedCode(rows(["Yes", "No"], ["No", "No"]))).toBe(0.5); // nothing to impute
  });
  // The page's reading in CPython (scripts/reference/note_errors_imputation.py): equal to the last bit.
  const fixture = JSON.parse(
    readFileSync(resolve(REPO, "tests/data/note-errors/imputation-fixture.json"), "utf8"),
  ) as { cases: { pairs: [V, V][]; side_rates: number; pooled_rate: number }[] };
  it.each(fixture.cases.map((c) => [c.pairs.length, c] as const))(
    "equals CPython's side-rate imputation on %i pairs",
    (_, c) => {
      expect(M.bcrImputedCode(rows(...c.pairs))).toBe(c.side_rates);
    },
  );
  it("differs from the pooled reading where the sides' rates differ", () => {
    const differing = fixture.cases.filter((c) => c.side_rates !== c.pooled_rate);
    expect(differing.length).toBeGreaterThan(3);
    for (const c of differing) expect(M.bcrImputedCode(rows(...c.pairs))).not.toBe(c.pooled_rate);
  });
});

describe("failures", () => {
  it("parse failures by side exclude API errors; truncation and API errors over notes", () => {
    const r = [
      row(null, "No"),
      row("Yes", null, { c: side(null, { reason: "api_error" }) }),
      row("Yes", "No", { e: side("Yes", { truncated: true }) }),
      row("Yes", "No"),
    ];
    expect(M.parseFailureRate("e")(r)).toBe(0.25);
    expect(M.parseFailureRate("c")(r)).toBe(0);
    expect(M.apiErrorRate(r)).toBe(1 / 8);
    expect(M.truncatedRate(r)).toBe(1 / 8);
  });
});

describe("breakdowns and configurations", () => {
  it("BCR per group, sorted", () => {
    const r = [row("Yes", "No", { rule: "PH08" }), row("No", "No", { rule: "DX05" })];
    expect(Object.keys(M.breakdown(r, "rule"))).toEqual(["DX05", "PH08"]);
    expect(M.breakdown(r, "rule").PH08).toMatchObject({ n: 1, bcr: 1 });
  });
  it("mean ± SD (n − 1) over configurations", () => {
    const m = meanSd([0.2, 0.4, null]);
    expect(m.n).toBe(2);
    expect(m.mean).toBeCloseTo(0.3, 15);
    expect(m.sd).toBeCloseTo(Math.sqrt(0.02), 15);
    expect(meanSd([0.5])).toEqual({ mean: 0.5, sd: null, n: 1 });
  });
});

describe("the evidence-contrast analysis", () => {
  const ev = (o: Partial<PairRow["ev"]>) => ({ ...noEvidence, e_evidence: true, c_evidence: true, ...o });
  it.each<[string, V, V, Partial<PairRow["ev"]>, M.EcaCategory | null]>([
    ["A: both hit", "Yes", "Yes", ev({ e_hit: true, c_hit: true }), "A"],
    ["B: the error side only", "Yes", "Yes", ev({ e_hit: true }), "B"],
    ["C: the twin only", "Yes", "Yes", ev({ c_hit: true }), "C"],
    ["D: neither", "Yes", "Yes", ev({}), "D"],
    ["E: Evidence on one side only", "Yes", "Yes", ev({ c_evidence: false, e_hit: true }), "E"],
    ["X: no Evidence on either side", "Yes", "Yes", noEvidence, "X"],
    ["not flagged on both sides", "Yes", "No", ev({ e_hit: true }), null],
  ])("%s", (_, e, c, evidence, cat) => {
    expect(M.ecaCategory(row(e, c, { ev: evidence as PairRow["ev"] }))).toBe(cat);
  });
  it("TP localisation, FP correction, flag localisation, span hit", () => {
    const r = [
      row("Yes", "Yes", { ev: ev({ e_hit: true, span_hit: true }) }), // B
      row("Yes", "Yes", { ev: ev({}) }), // D
      row("Yes", "No", { ev: ev({ e_hit: true }) }),
      row("No", "No"),
    ];
    expect(M.tpLocalisation(r)).toBe(0.5);
    expect(M.bcrFpCorrected(r)).toBe(0.5); // one both-correct + one B, of 4
    expect(M.flagLocalisation(r)).toBeCloseTo(2 / 3, 15);
    expect(M.spanHit(r)).toBeCloseTo(1 / 3, 15);
  });

  it("is_match: containment, or 60 % of the reference's words", () => {
    expect(isMatch("the note says P: famotidine 유지, 2주 후 f/u.", "famotidine 유지, 2주 후 f/u.")).toBe(
      true,
    );
    expect(wordCoverage("famotidine 유지 2주", "famotidine 유지 2주 후 재진")).toBe(0.6);
    expect(isMatch("famotidine 유지 2주", "famotidine 유지 2주 후 재진")).toBe(true);
    expect(isMatch("famotidine 유지", "famotidine 유지 2주 후 재진")).toBe(false);
    expect(wordCoverage("HbA1c 7.8%, BP 130/80", "BP 130/80")).toBe(1); // numbers keep their dot and slash
  });
  it("Hangul takes the word path; Chinese and Japanese the character path; characters as a check", () => {
    // a particle glued to the word: no word matches, though the characters do
    expect(isMatch("혈당이 양호함", "혈당 조절 양호")).toBe(false);
    expect(charCoverage("혈당이 양호함", "혈당 조절 양호")).toBe(4 / 6);
    expect(isMatch("血糖良好", "血糖控制良好")).toBe(true);
    expect(isMatch("血糖", "血糖控制良好")).toBe(false);
  });

  const file = "specs/note-errors/sample/pairs_test.jsonl";
  const pairs = readPairs(readFileSync(resolve(REPO, file), "utf8"), file);
  it("the reference is the edited line; for LI06-LI09 the A line also counts", () => {
    const li06 = pairs.find((p) => p.rule === "LI06")!;
    expect(li06.reference_lines).toEqual(["O", "A"]);
    expect(referenceTexts(li06, "error")).toHaveLength(2);
    const a = li06.error_note.split("\n").find((l) => l.startsWith("A:"))!;
    expect(evidenceRow(li06, a, null).e_hit).toBe(true);
    expect(pairs.find((p) => p.rule === "LI01")!.reference_lines).toEqual(["A"]);
  });
  it("the P-line baseline is the share of pairs edited on the P line", () => {
    const r = pairs.map((p) =>
      row(null, null, { edited_line: p.edited_line, ev: evidenceRow(p, null, null) }),
    );
    expect(M.pLineBaseline(r)).toBe(pairs.filter((p) => p.edited_line === "P").length / pairs.length);
  });
  it("span hit: the Evidence holds the inserted text", () => {
    const p = pairs.find((x) => x.rule === "PH08")!;
    expect(evidenceRow(p, `P: ${p.edits[0]!.error_text} 유지`, null).span_hit).toBe(true);
    expect(evidenceRow(p, "S: 속쓰림", null).span_hit).toBe(false);
  });
});

describe("pair rows as the bootstrap's unit rows (fields), and back", () => {
  it("every metric gives the same value from decoded unit rows", async () => {
    const { toUnitRow, statistics } = await import("../../tasks/note-errors/rows.js");
    const ev = { ...noEvidence, e_evidence: true, c_evidence: true, e_hit: true };
    const r = [
      row("Yes", "No", { category: "diagnosis", ev }),
      row("Yes", "Yes", { ev, exposed: true }),
      row(null, "No", { e: side(null, { reason: "truncated", truncated: true }) }),
      row("No", null, { c: side(null, { reason: "api_error" }), category: "pharmacotherapy" }),
      row("Yes", "No", { e: side("Yes", { strict: null }) }),
    ];
    const stats = statistics();
    const units = r.map(toUnitRow);
    for (const m of M.reportedMetrics()) expect([m.name, stats[m.name]!(units)]).toEqual([m.name, m.fn(r)]);
    expect(units.map((u) => u.value)).toEqual([1, 0, 0, 0, 1]);
  });

  it("gives every metric's value when many pairs share fields (one decoded row for each kind)", async () => {
    const { toUnitRow, statistics } = await import("../../tasks/note-errors/rows.js");
    // Kinds that differ from one another in a single field each, so that a shared row standing for two
    // kinds (a field missing from its key) changes some metric.
    const flagged = (k: keyof typeof noEvidence) => ({ ...noEvidence, e_evidence: true, [k]: true });
    const kinds = [
      row("Yes", "No"),
      row("Yes", "No", { e: side("Yes", { strict: null }) }),
      row("Yes", "No", { c: side("No", { strict: "Yes" }) }),
      row("Yes", "No", { exposed: true }),
      row("Yes", "No", { category: "pharmacotherapy" }),
      ...(Object.keys(noEvidence) as (keyof typeof noEvidence)[]).map((k) =>
        row("Yes", "No", { ev: flagged(k) }),
      ),
      row(null, "No"),
      row(null, "No", { e: side(null, { reason: "truncated", truncated: true }) }),
      row(null, "No", { e: side(null, { reason: "api_error" }) }),
      row("Yes", null, { c: side(null, { reason: "template_echo" }) }),
      row("No", "Yes"),
    ];
    // Each kind many times over, each pair its own id, in an order that is not the kinds' order.
    const r = Array.from({ length: 10 * kinds.length }, (_, i) => ({
      ...kinds[(i * 7) % kinds.length]!,
      pair_id: `p${i}`,
    }));
    const stats = statistics();
    const units = r.map(toUnitRow);
    for (const m of M.reportedMetrics()) expect([m.name, stats[m.name]!(units)]).toEqual([m.name, m.fn(r)]);
    // Resampled: some pairs drawn twice, some not at all.
    const drawn = Array.from({ length: r.length }, (_, i) => (i * 13 + 5) % r.length);
    for (const m of M.reportedMetrics())
      expect([m.name, stats[m.name]!(drawn.map((i) => units[i]!))]).toEqual([
        m.name,
        m.fn(drawn.map((i) => r[i]!)),
      ]);
  });
});
