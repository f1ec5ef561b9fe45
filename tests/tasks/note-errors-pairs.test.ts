// The pairs reader: one field map, the record shape of docs/protocols/note-errors.md, clear refusals.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { REPO } from "../support/helpers.js";
import { headerCodeOf, readPairs, soapLine } from "../../tasks/note-errors/pairs.js";

const NOTE =
  "#M17 무릎 골관절염\nS: 우측 무릎 통증.\nO: BP 120/80.\nA: Knee OA, 증상 지속.\nP: celecoxib 유지.";
const base = {
  pair_id: "abc",
  error_note: NOTE.replace("Knee OA", "LBP"),
  clean_note: NOTE,
  category: "diagnosis",
  rule: "DX05",
  condition: "M17",
  edited_line: "A",
};
const one = (r: object) => readPairs(JSON.stringify(r) + "\n", "pairs_test.jsonl")[0]!;

describe("field names: FIELDS maps each canonical name from the names a file may use", () => {
  it.each<[string, object, string, unknown]>([
    ["canonical names", base, "rule", "DX05"],
    ["id for pair_id", { ...base, pair_id: undefined, id: "x1" }, "pair_id", "x1"],
    [
      "error_text for error_note",
      { ...base, error_note: undefined, error_text: "#M17 x\nA: y" },
      "error_note",
      "#M17 x\nA: y",
    ],
    ["header code from the field", { ...base, header_code: "M54" }, "header_code", "M54"],
    ["header code from the note's first line", base, "header_code", "M17"],
    ["condition defaults to the header code", { ...base, condition: undefined }, "condition", "M17"],
    ["exposure", { ...base, item_check_exposed: true }, "item_check_exposed", true],
    ["no exposure field: not exposed", base, "item_check_exposed", false],
    ["reference: the edited line", base, "reference_lines", ["A"]],
    [
      "reference of LI06-LI09: + the A line",
      { ...base, rule: "LI07", edited_line: "O" },
      "reference_lines",
      ["O", "A"],
    ],
    [
      "reference lines given in the file",
      { ...base, reference_lines: ["A", "P"] },
      "reference_lines",
      ["A", "P"],
    ],
  ])("%s", (_, record, field, value) => {
    expect(one(record)[field as keyof ReturnType<typeof one>]).toEqual(value);
  });
  it("edit spans with their offsets and texts", () => {
    const p = one({
      ...base,
      edits: [{ line: "A", error_text: "LBP", clean_text: "Knee OA", error_start: 3 }],
    });
    expect(p.edits).toEqual([
      {
        line: "A",
        error_text: "LBP",
        clean_text: "Knee OA",
        error_start: 3,
        error_end: null,
        clean_start: null,
        clean_end: null,
      },
    ]);
  });
});

describe("refusals name the file, the line and the field", () => {
  it.each<[string, string, RegExp]>([
    ["not JSON", "{oops", /pairs_test.jsonl:1: not a JSON object/],
    ["an array", "[1]", /pairs_test.jsonl:1: not a JSON object/],
    ["no clean note", JSON.stringify({ ...base, clean_note: "" }), /:1: field clean_note \(clean_note or/],
    [
      "unknown category",
      JSON.stringify({ ...base, category: "dose" }),
      /field category .* "dose", not one of/,
    ],
    [
      "bad line",
      JSON.stringify({ ...base, edited_line: "X" }),
      /field edited_line .* not one of S, O, A, P/,
    ],
    [
      "no header code anywhere",
      JSON.stringify({ ...base, error_note: "S: x", clean_note: "S: y" }),
      /header_code .* first line holds no code/,
    ],
    ["duplicate id", `${JSON.stringify(base)}\n\n${JSON.stringify(base)}`, /:3: pair_id abc appears twice/],
  ])("%s", (_, text, message) => {
    expect(() => readPairs(text, "pairs_test.jsonl")).toThrow(message);
  });
});

describe("note helpers", () => {
  it.each([
    ["#M17 무릎", "M17"],
    ["[E11] 당뇨", "E11"],
    ["K29.5 위염", "K29.5"],
    ["무릎 통증", null],
  ])("header code of %j", (first, code) => {
    expect(headerCodeOf(`${first}\nS: x`)).toBe(code);
  });
  it("SOAP lines without their label", () => {
    expect(soapLine(NOTE, "A")).toBe("Knee OA, 증상 지속.");
    expect(soapLine(NOTE, "S")).toBe("우측 무릎 통증.");
  });
});

describe("the synthetic sample", () => {
  const read = (split: string) => {
    const f = `specs/note-errors/sample/pairs_${split}.jsonl`;
    return readPairs(readFileSync(resolve(REPO, f), "utf8"), f);
  };
  it.each(["test", "train"])(
    "%s: ≥48 pairs, 16 rules, 8 conditions, A/O/P edits, labelled synthetic",
    (split) => {
      const pairs = read(split);
      expect(pairs.length).toBeGreaterThanOrEqual(48);
      expect(new Set(pairs.map((p) => p.rule)).size).toBe(16);
      expect([...new Set(pairs.map((p) => p.condition))].sort()).toEqual(
        ["E11", "E78", "F32", "I10", "J30", "K29", "M17", "M54"].sort(),
      );
      expect([...new Set(pairs.map((p) => p.edited_line))].sort()).toEqual(["A", "O", "P"]);
      expect(pairs.every((p) => p.synthetic)).toBe(true);
      // each side holds its own text at the edited span
      for (const p of pairs) {
        const e = p.edits[0]!;
        expect(p.error_note.slice(e.error_start!, e.error_end!)).toBe(e.error_text);
        expect(p.clean_note.slice(e.clean_start!, e.clean_end!)).toBe(e.clean_text);
        expect(p.error_note).not.toBe(p.clean_note);
      }
    },
  );
});
