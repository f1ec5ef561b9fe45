// The verdict rules of the note-errors document (spec.parser), in its order, one table per rule.
import { describe, expect, it } from "vitest";
import {
  answerText,
  evidenceText,
  parseVerdict,
  strictVerdict,
  tolerantVerdict,
  type ReplyView,
} from "../../tasks/note-errors/verdict.js";

const R = (text: string, o: Partial<ReplyView> = {}): ReplyView => ({
  text,
  error: null,
  finish_reason: "stop",
  reasoning: false,
  ...o,
});
const FOUR = (v: string) =>
  `Evidence: "P: sertraline 유지"\nAnalysis: wrong drug.\nConfidence: 0.9\nError: ${v}`;

describe("rule 1: a final API error is no verdict", () => {
  it.each([
    ["an error with text", R(FOUR("Yes"), { error: "HTTP 500 after 4 attempts" })],
    ["an error without text", R("", { error: "connection reset" })],
  ])("%s", (_, reply) => {
    const p = parseVerdict(reply);
    expect([p.verdict, p.strict, p.reason]).toEqual([null, null, "api_error"]);
  });
});

describe("rule 2: drop every <think>…</think> block, keep the text after the last </think>", () => {
  it.each([
    ["one block", `<think>Error: No</think>\n${FOUR("Yes")}`, "Yes"],
    ["two blocks", `<think>a</think>Error: No<think>Error: No</think>\n${FOUR("Yes")}`, "Yes"],
    ["upper-case tags", `<THINK>Error: Yes</THINK>${FOUR("No")}`, "No"],
    ["a verdict only inside the block", "<think>Error: Yes</think>\nI am not sure.", null],
    ["an unclosed block runs to the end", `${FOUR("Yes")}\n<think>Error: No`, "Yes"],
    ["an unclosed block holding the only verdict", "<think>Error: Yes", null],
  ])("%s", (_, text, verdict) => {
    expect(parseVerdict(R(text)).verdict).toBe(verdict);
  });
  it("keeps only what follows the last close", () => {
    expect(answerText("x</think>y</think>z")).toEqual({ answer: "z", closed: true });
  });
});

describe("rule 3: finish_reason length is no verdict, but for a closed reasoning block, then Error", () => {
  it.each<[string, ReplyView, string | null, string | null]>([
    ["cut without any reasoning block", R(FOUR("Yes"), { finish_reason: "length" }), null, "truncated"],
    [
      "cut inside the reasoning block",
      R("<think>Error: Yes …", { finish_reason: "length" }),
      null,
      "truncated",
    ],
    [
      "closed block, cut before the Error line",
      R("<think>x</think>\nEvidence: a\nAnalysis: b", { finish_reason: "length" }),
      null,
      "truncated",
    ],
    [
      "closed block and an Error line after it",
      R(`<think>x</think>\n${FOUR("Yes")}`, { finish_reason: "length" }),
      "Yes",
      null,
    ],
    [
      "a reasoning field counts as a closed block",
      R(FOUR("No"), { finish_reason: "length", reasoning: true }),
      "No",
      null,
    ],
    ["not cut: the rule does not apply", R(FOUR("Yes")), "Yes", null],
  ])("%s", (_, reply, verdict, reason) => {
    const p = parseVerdict(reply);
    expect([p.verdict, p.reason]).toEqual([verdict, reason]);
    expect(p.truncated).toBe(reply.finish_reason === "length");
  });
});

describe('rule 4: a last Error line that echoes the template ("No or Yes") is no verdict', () => {
  it.each([
    ["the template's slot", "Evidence: x\nError: No or Yes", null, "template_echo"],
    ["in brackets", "Error: [No or Yes]", null, "template_echo"],
    ["the other order", "Error: Yes or No", null, "template_echo"],
    ["slashed", "**Error:** Yes/No", null, "template_echo"],
    ["an echo followed by a real last line", "Error: No or Yes\n\nError: Yes", "Yes", null],
    ["a real line followed by the echo", "Error: Yes\nError: No or Yes", null, "template_echo"],
  ])("%s", (_, text, verdict, reason) => {
    const p = parseVerdict(R(text));
    expect([p.verdict, p.reason]).toEqual([verdict, reason]);
  });
});

describe("rule 5: the tolerant parser (last Error line's first yes/no), the strict one beside it", () => {
  it.each<[string, string, "Yes" | "No" | null, "Yes" | "No" | null]>([
    ["the four-line format", FOUR("Yes"), "Yes", "Yes"],
    ["lower case", "Error: yes", "Yes", null],
    ["bold name", "**Error:** No", "No", null],
    ["bold value", "Error: **Yes**", "Yes", null],
    ["heading", "### Error: No", "No", null],
    ["no separator", "Error Yes", "Yes", null],
    ["full-width colon", "Error：Yes", "Yes", null],
    ["a dash", "Error - No", "No", null],
    ["a bullet", "- Error: Yes", "Yes", null],
    ["Final Error", "Final Error: No", "No", null],
    ["words after the value", "Error: Yes, the drug does not fit.", "Yes", null],
    ["spaces around", "  Error: No  ", "No", "No"],
    ["the last Error line wins", "Error: Yes\nAnalysis: on reflection\nError: No", "No", "No"],
    ["strict needs the last line", "Error: Yes\nThat is my answer.", "Yes", null],
    ["a word starting with no is not No", "Error: None found", null, null],
    ["no Error line", "Yes, there is an error.", null, null],
    ["Error field without a value", "Error:", null, null],
  ])("%s", (_, text, tolerant, strict) => {
    expect(tolerantVerdict(text)).toBe(tolerant);
    expect(strictVerdict(text)).toBe(strict);
    const p = parseVerdict(R(text));
    expect([p.verdict, p.strict, p.reason]).toEqual([tolerant, strict, tolerant ? null : "no_error_line"]);
  });
});

describe("the Evidence text, for the evidence analysis", () => {
  it.each([
    ["quoted", FOUR("Yes"), "P: sertraline 유지"],
    ["bold field name", '**Evidence:** "A: Lumbar strain"\n**Analysis:** x\nError: Yes', "A: Lumbar strain"],
    [
      "over two lines",
      "Evidence: O: HbA1c 9.9%\nA: T2DM, 혈당 잘 조절됨\nAnalysis: x",
      "O: HbA1c 9.9%\nA: T2DM, 혈당 잘 조절됨",
    ],
    ["empty", "Evidence: \nAnalysis: none\nError: No", null],
    ["absent", "Error: No", null],
    ["after a think block only", "<think>Evidence: x</think>\nError: No", null],
  ])("%s", (_, text, evidence) => {
    expect(evidenceText(answerText(text).answer)).toBe(evidence);
    expect(parseVerdict(R(text)).evidence).toBe(evidence);
  });
});
