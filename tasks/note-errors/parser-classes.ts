// The classes of reply the verdict parser meets, each with an example, its reading and where the reading
// comes from: a rule of the task page (spec.parser) or our choice where the page is silent (the authors'
// tolerant parser is not public). The table is the test's data
// (tests/tasks/note-errors-parser-classes.test.ts) and the doc's (docs/protocols/note-errors.md, checked
// against parserClassTable()). Each run counts its replies per class (tables.counts.parser_classes) and how
// many fell in a class that is our choice.
import { answerText, WRAPPER, type ParsedVerdict, type ReplyView } from "./verdict.js";

export interface ParserClass {
  id: string;
  /** A reply of the class (its text; finish_reason and a reasoning field where they matter). */
  example: { text: string; finish_reason?: string; reasoning?: boolean; error?: string };
  /** What the parser makes of it: the tolerant verdict, or why there is none. */
  reading: "Yes" | "No" | "api_error" | "truncated" | "template_echo" | "no_error_line";
  source: "page" | "ours";
  why: string;
}

const FOUR = (lastLine: string) => `Evidence: "P: x"\nAnalysis: a.\nConfidence: 0.9\n${lastLine}`;

/** In the order the classifier tries them: the first class a reply matches is its class. */
export const PARSER_CLASSES: ParserClass[] = [
  {
    id: "api_error",
    example: { text: "", error: "HTTP 500 after 6 attempts" },
    reading: "api_error",
    source: "page",
    why: "A final API error is no verdict",
  },
  {
    id: "truncated",
    example: { text: FOUR("Error: Yes"), finish_reason: "length" },
    reading: "truncated",
    source: "page",
    why: "cut at max_tokens without a closed reasoning block and an Error line after it",
  },
  {
    id: "truncated_after_think",
    example: { text: `<think>x</think>\n${FOUR("Error: Yes")}`, finish_reason: "length" },
    reading: "Yes",
    source: "page",
    why: "cut after a closed reasoning block and an Error line",
  },
  {
    id: "truncated_reasoning_field",
    example: { text: FOUR("Error: No"), finish_reason: "length", reasoning: true },
    reading: "No",
    source: "ours",
    why: "a reasoning field is read as a closed reasoning block",
  },
  {
    id: "unclosed_think",
    example: { text: `${FOUR("Error: Yes")}\n<think>Error: No` },
    reading: "Yes",
    source: "ours",
    why: "an opened, never-closed think block runs to the end and is dropped",
  },
  {
    id: "template_echo",
    example: { text: FOUR("Error: No or Yes") },
    reading: "template_echo",
    source: "page",
    why: 'the last Error line echoes the template ("No or Yes")',
  },
  {
    id: "template_echo_variant",
    example: { text: FOUR("Error (Yes/No): Yes") },
    reading: "template_echo",
    source: "ours",
    why: '"Yes or No", "Yes/No", "No/Yes" anywhere in the last Error line count as the echo (conservative)',
  },
  {
    id: "strict_format",
    example: { text: FOUR("Error: Yes") },
    reading: "Yes",
    source: "page",
    why: "the last line is exactly Error: Yes or Error: No (the strict parser agrees)",
  },
  {
    id: "error_line_not_last",
    example: { text: "Error: No\nThe note is consistent." },
    reading: "No",
    source: "ours",
    why: "the last Error line is read even when text follows it",
  },
  {
    id: "markdown",
    example: { text: FOUR("**Error:** Yes") },
    reading: "Yes",
    source: "ours",
    why: "markdown (* _ ` # >) is dropped before reading",
  },
  {
    id: "bullet_or_final",
    example: { text: FOUR("- Final Error: No") },
    reading: "No",
    source: "ours",
    why: 'a bullet and "Final" before Error are allowed',
  },
  {
    id: "other_separator",
    example: { text: FOUR("Error - Yes") },
    reading: "Yes",
    source: "ours",
    why: 'a separator other than ":" (-, –, —, =, ：, none) is allowed',
  },
  {
    id: "wrapped_value",
    example: { text: FOUR("Error: (Yes)") },
    reading: "Yes",
    source: "ours",
    why:
      'a value in one pair of brackets, parentheses or quotes ([Yes], (Yes), "Yes") ' +
      "is read as the bare word",
  },
  {
    id: "other_case_or_words",
    example: { text: FOUR("Error: yes, the drug does not fit") },
    reading: "Yes",
    source: "ours",
    why: "case is ignored and words after the yes/no word are allowed",
  },
  {
    id: "error_detected",
    example: { text: FOUR("Error detected: Yes") },
    reading: "no_error_line",
    source: "ours",
    why: "words between Error and the value are not read (conservative)",
  },
  {
    id: "other_word_value",
    example: { text: FOUR("Error: True") },
    reading: "no_error_line",
    source: "ours",
    why:
      "a word other than yes/no (True, False) is not read: " +
      "the page's verdict is Yes or No (conservative)",
  },
  {
    id: "value_on_next_line",
    example: { text: FOUR("Error:\nYes") },
    reading: "no_error_line",
    source: "ours",
    why: "an Error line with no value, its yes/no on the next line, is not read (conservative)",
  },
  {
    id: "no_value",
    example: { text: FOUR("Error:") },
    reading: "no_error_line",
    source: "ours",
    why: "an Error line with no value and no yes/no after it gives no verdict",
  },
  {
    id: "non_english_value",
    example: { text: FOUR("Error: 예") },
    reading: "no_error_line",
    source: "ours",
    why: "a value other than yes/no (예, 아니오) is not read (conservative)",
  },
  {
    id: "numbered_error_line",
    example: { text: FOUR("4. Error: Yes") },
    reading: "no_error_line",
    source: "ours",
    why: "a numbered Error line is not an Error line (conservative)",
  },
  {
    id: "no_error_line",
    example: { text: "The plan does not fit the diagnosis. Yes." },
    reading: "no_error_line",
    source: "ours",
    why: "no Error line: a bare Yes elsewhere is not read",
  },
];

const decoration = /[*_`#>]+/g;
const decorated = /[*_`#>]/;
const errorLine = /^(?:[-•]\s*)?(?:final\s+)?error\b/i;

/** The class of one reply (the first of PARSER_CLASSES it matches), from the reply and its parse. */
export function parserClass(reply: ReplyView, parsed: Omit<ParsedVerdict, "class">): string {
  if (reply.error !== null) return "api_error";
  const { answer, closed } = answerText(reply.text);
  if (parsed.truncated) {
    if (parsed.reason === "truncated") return "truncated";
    if (closed) return "truncated_after_think";
    return "truncated_reasoning_field";
  }
  const afterClose = closed
    ? reply.text.slice(reply.text.toLowerCase().lastIndexOf("</think>"))
    : reply.text;
  if (/<think>/i.test(afterClose)) return "unclosed_think";
  const raw = answer.split(/\r?\n/).filter((line) => errorLine.test(line.replace(decoration, "").trim()));
  const last = raw[raw.length - 1];
  if (parsed.reason === "template_echo")
    return /\bno\s+or\s+yes\b/i.test(last ?? "") ? "template_echo" : "template_echo_variant";
  if (parsed.verdict === null) return unreadClass(answer, last);
  if (parsed.strict !== null) return "strict_format";
  const trimmed = last!.trim();
  if (decorated.test(trimmed)) return "markdown";
  if (/^(?:[-•]\s*|final\s)/i.test(trimmed)) return "bullet_or_final";
  if (!/^error\s*:/i.test(trimmed)) return "other_separator";
  if (wrappedValue.test(trimmed)) return "wrapped_value";
  if (!/^Error: (Yes|No)$/.test(trimmed)) return "other_case_or_words";
  return "error_line_not_last";
}

const field = String.raw`^(?:[-•]\s*)?(?:final\s+)?error`;
const wrappedValue = new RegExp(`^error\\s*:\\s*${WRAPPER}`, "i");

/** The class of a reply with an answer but no verdict; `last` is its last Error line, if any. */
function unreadClass(answer: string, last: string | undefined): string {
  if (!last) return /^\s*\d+[.)]\s*error\b/im.test(answer) ? "numbered_error_line" : "no_error_line";
  const plain = last.replace(decoration, "").trim();
  if (new RegExp(`${field}\\s+[a-z]`, "i").test(plain)) return "error_detected";
  if (new RegExp(`${field}\\s*[:：=\\-–—]\\s*[a-z]`, "i").test(plain)) return "other_word_value";
  if (new RegExp(`${field}\\s*[:：=\\-–—]?\\s*$`, "i").test(plain)) return emptyValueClass(answer, last);
  return "non_english_value";
}

/** An Error line with no value: is its yes/no on the next non-empty line? */
function emptyValueClass(answer: string, last: string): string {
  const lines = answer.split(/\r?\n/);
  const at = lines.lastIndexOf(last);
  const next = lines.slice(at + 1).find((line) => line.trim() !== "");
  const value = (next ?? "").replace(decoration, "").trim();
  return /^(?:yes|no)\b/i.test(value) ? "value_on_next_line" : "no_value";
}

/** The class table as docs/protocols/note-errors.md shows it. */
export function parserClassTable(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, "⏎");
  const rows = PARSER_CLASSES.map((entry) => {
    const extra = [
      entry.example.error ? `API error` : "",
      entry.example.finish_reason ? `finish_reason ${entry.example.finish_reason}` : "",
      entry.example.reasoning ? "reasoning field" : "",
    ].filter(Boolean);
    const example =
      `\`${cell(entry.example.text) || " "}\`` + (extra.length ? ` (${extra.join(", ")})` : "");
    const reading =
      entry.reading === "Yes" || entry.reading === "No" ? entry.reading : `no verdict (${entry.reading})`;
    const source = entry.source === "page" ? "page rule" : "our choice";
    return `| ${entry.id} | ${example} | ${reading} | ${source}: ${cell(entry.why)} |`;
  });
  return ["| class | example | reading | source |", "|---|---|---|---|", ...rows].join("\n");
}
