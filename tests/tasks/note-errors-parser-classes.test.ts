// The parser's class table is this test's data: each class's example is read as the table says and falls in
// that class, and docs/protocols/note-errors.md shows the table as the code holds it.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { REPO } from "../support/helpers.js";
import { PARSER_CLASSES, parserClass, parserClassTable } from "../../tasks/note-errors/parser-classes.js";
import { parseVerdict, type ReplyView } from "../../tasks/note-errors/verdict.js";

const view = (e: (typeof PARSER_CLASSES)[number]["example"]): ReplyView => ({
  text: e.text,
  error: e.error ?? null,
  finish_reason: e.finish_reason ?? "stop",
  reasoning: e.reasoning ?? false,
});

describe("note-errors parser classes", () => {
  it.each(PARSER_CLASSES.map((c) => [c.id, c] as const))(
    "%s: read as the table says, and classed so",
    (_, c) => {
      const v = parseVerdict(view(c.example));
      expect(v.verdict ?? v.reason).toBe(c.reading);
      expect(parserClass(view(c.example), v)).toBe(c.id);
    },
  );

  // Replies the class table's examples do not show, read and classed as the task document says: the
  // verdict is Yes or No after any separator; a word other than those is no verdict, and no "non-English".
  it.each([
    ["Error — Yes", "Yes", "other_separator"],
    ["Error—No", "No", "other_separator"],
    ["Error: True", "no_error_line", "other_word_value"],
    ["Error: False", "no_error_line", "other_word_value"],
    ["Error: 아니오", "no_error_line", "non_english_value"],
    // One rule for every wrapper around the value: brackets, parentheses and quotes are read alike.
    ["Error: [Yes]", "Yes", "wrapped_value"],
    ["Error: (No)", "No", "wrapped_value"],
    ['Error: "Yes"', "Yes", "wrapped_value"],
    ["Error: 'No'", "No", "wrapped_value"],
    ["Error: “Yes”", "Yes", "wrapped_value"],
    // The value on the line after "Error:" is English, and the class says where it is.
    ["Error:\nYes", "no_error_line", "value_on_next_line"],
    ["Error:\n\n**No**", "no_error_line", "value_on_next_line"],
    ["Error:", "no_error_line", "no_value"],
    ["Error:\n예", "no_error_line", "no_value"],
  ])("%s: read %s, classed %s", (line, reading, id) => {
    const reply = view({ text: `Evidence: "P: x"\nAnalysis: a.\nConfidence: 0.9\n${line}` });
    const v = parseVerdict(reply);
    expect(v.verdict ?? v.reason).toBe(reading);
    expect(parserClass(reply, v)).toBe(id);
  });

  it("names each class once, and marks page rules and our choices", () => {
    expect(new Set(PARSER_CLASSES.map((c) => c.id)).size).toBe(PARSER_CLASSES.length);
    expect(PARSER_CLASSES.filter((c) => c.source === "page").map((c) => c.id)).toEqual([
      "api_error",
      "truncated",
      "truncated_after_think",
      "template_echo",
      "strict_format",
    ]);
  });

  it("is published in docs/protocols/note-errors.md as the code holds it", () => {
    const doc = readFileSync(`${REPO}/docs/protocols/note-errors.md`, "utf8");
    expect(doc).toContain(parserClassTable());
  });
});
