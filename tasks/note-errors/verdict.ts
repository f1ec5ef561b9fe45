// The verdict rules of the task document (spec.parser), applied in its order:
//   1. a final API error is no verdict;
//   2. drop every <think>…</think> block, keep only the text after the last </think>;
//   3. a reply cut at max_tokens is no verdict unless it closed a reasoning block
//      and wrote an Error line after it;
//   4. a last Error line that echoes the template ("No or Yes") is no verdict;
//   5. otherwise the tolerant verdict parser; the strict parser's verdict is kept beside it.
// The Evidence text is extracted for the evidence analysis. Our reading of the authors' parsers (whose code
// nobody here has seen) is written down in docs/protocols/note-errors.md.

export type Verdict = "Yes" | "No";
export type NoVerdictReason = "api_error" | "truncated" | "template_echo" | "no_error_line";

/** What the parser needs of a reply record (the model stage's whole record). */
export interface ReplyView {
  text: string;
  error: string | null; // a final API error
  finish_reason: string | null;
  reasoning: boolean; // a non-empty reasoning / reasoning_content field came back
}

export interface ParsedVerdict {
  verdict: Verdict | null; // the tolerant parser's, after rules 1-4
  strict: Verdict | null; // the strict parser's, after the same rules 1-4
  reason: NoVerdictReason | null; // why `verdict` is null
  evidence: string | null; // the Evidence field's text, when the reply has one
  truncated: boolean; // finish_reason length
  think: boolean; // the content held a think tag (<think>, or a bare </think>)
  /** A score-reading probe's decision score (a `Score:` line; the conjunction baseline writes one). */
  score?: number;
}

/** Rule 2: the text after the last </think>; an unclosed <think> runs to the end and is dropped too. */
export function answerText(text: string): { answer: string; closed: boolean } {
  const lower = text.toLowerCase();
  const last = lower.lastIndexOf("</think>");
  let answer = last >= 0 ? text.slice(last + "</think>".length) : text;
  // Complete blocks after the last close cannot exist; an opened, never-closed block is reasoning cut short.
  const open = answer.toLowerCase().indexOf("<think>");
  if (open >= 0) answer = answer.slice(0, open);
  return { answer, closed: last >= 0 };
}

// Markdown decoration a model puts around field names and values: **Error:** *Yes*, ### Error: `No`.
const decoration = /[*_`#>]+/g;
const clean = (line: string) => line.replace(decoration, "").trim();

/** Lines that name the Error field (after markdown is removed), in order. */
function errorLines(answer: string): string[] {
  return answer
    .split(/\r?\n/)
    .map(clean)
    .filter((line) => /^(?:[-•]\s*)?(?:final\s+)?error\b/i.test(line));
}

/** The Error field's name and separator, as the tolerant parser allows them. */
export const ERROR_FIELD = String.raw`(?:[-•]\s*)?(?:final\s+)?error\s*(?:[:：=\-–—]\s*)?`;
/** One opening bracket, parenthesis or quote before the value: [Yes], (Yes), "Yes", 'Yes', “Yes” are read
 * alike (one rule for all wrappers; the closing mark is not required). */
export const WRAPPER = String.raw`[\[("'“‘]\s*`;

const tolerantValue = new RegExp(`^${ERROR_FIELD}(?:${WRAPPER})?(yes|no)\\b`, "i");

/** Rule 4: the template's own answer slot ("No or Yes") left as it was. */
export function isTemplateEcho(line: string): boolean {
  return /\b(?:no\s+or\s+yes|yes\s+or\s+no|yes\s*\/\s*no|no\s*\/\s*yes)\b/i.test(line);
}

/**
 * The tolerant parser: the last line that names the Error field, with markdown dropped, bullets,
 * "Final Error" and any separator allowed (":", "-", "–", "—", "=", "：", or none), case ignored; its first
 * yes/no word is the verdict, bare or in one pair of brackets, parentheses or quotes.
 * Without such a line: no verdict (a bare "Yes" elsewhere in the reply is not read as one).
 */
export function tolerantVerdict(answer: string): Verdict | null {
  const lines = errorLines(answer);
  const last = lines[lines.length - 1];
  if (last === undefined) return null;
  const match = tolerantValue.exec(last);
  if (!match) return null;
  return match[1]!.toLowerCase() === "yes" ? "Yes" : "No";
}

/** A probe's score: a line `Score: <number>` (models are not asked for one; a baseline that scores
 *  writes it). */
export function probeScore(answer: string): number | null {
  const match = /^Score:[ \t]*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)[ \t]*$/im.exec(answer);
  return match ? Number(match[1]) : null;
}

/**
 * The strict parser: the last non-empty line of the answer must be exactly "Error: Yes" or "Error: No"
 * (spaces around allowed, nothing else: no markdown, no other case, no trailing words).
 */
export function strictVerdict(answer: string): Verdict | null {
  const lines = answer.split(/\r?\n/).filter((line) => line.trim() !== "");
  const last = lines[lines.length - 1]?.trim();
  if (last === "Error: Yes") return "Yes";
  if (last === "Error: No") return "No";
  return null;
}

/**
 * The Evidence field's text: from "Evidence:" to the next field name
 * (Analysis, Confidence, Error) or the end.
 */
export function evidenceText(answer: string): string | null {
  const lines = answer.split(/\r?\n/);
  const start = lines.findIndex((line) => /^(?:[-•]\s*)?evidence\s*[:：]/i.test(clean(line)));
  if (start < 0) return null;
  const out: string[] = [clean(lines[start]!).replace(/^(?:[-•]\s*)?evidence\s*[:：]\s*/i, "")];
  for (const line of lines.slice(start + 1)) {
    if (/^(?:[-•]\s*)?(?:analysis|confidence|(?:final\s+)?error)\b\s*[:：]?/i.test(clean(line))) break;
    out.push(line.trim());
  }
  const text = out
    .join("\n")
    .trim()
    .replace(/^["“'「]+|["”'」]+$/g, "")
    .trim();
  return text === "" ? null : text;
}

export function parseVerdict(reply: ReplyView): ParsedVerdict {
  const truncated = reply.finish_reason === "length";
  const think = /<\/?think\b/i.test(reply.text); // a bare </think> is reasoning too
  const none = (reason: NoVerdictReason, evidence: string | null = null): ParsedVerdict => ({
    verdict: null,
    strict: null,
    reason,
    evidence,
    truncated,
    think,
  });
  if (reply.error !== null) return none("api_error"); // rule 1
  const { answer, closed } = answerText(reply.text); // rule 2
  const evidence = evidenceText(answer);
  const lines = errorLines(answer);
  if (truncated) {
    // rule 3: a closed reasoning block (in the content, or a separate reasoning field)
    // and an Error line after it
    const closedReasoning = closed || reply.reasoning;
    if (!closedReasoning || lines.length === 0) return none("truncated", evidence);
  }
  const last = lines[lines.length - 1];
  if (last !== undefined && isTemplateEcho(last)) return none("template_echo", evidence); // rule 4
  const verdict = tolerantVerdict(answer); // rule 5
  const score = probeScore(answer);
  return {
    ...(score === null ? {} : { score }),
    verdict,
    strict: strictVerdict(answer),
    reason: verdict === null ? "no_error_line" : null,
    evidence,
    truncated,
    think,
  };
}
