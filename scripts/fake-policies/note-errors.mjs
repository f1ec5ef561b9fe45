// Fake-server policies for the note-errors task: a rule-of-thumb reviewer of Korean SOAP notes that is right
// on some notes and wrong on others, and (with quirks on) answers the way real models do: <think> blocks,
// replies cut at max_tokens, the template's "No or Yes" echoed, a reasoning field, markdown, lower case, API
// errors. Everything is a function of the request body, so a rerun gets the same replies.
import { createHash } from "node:crypto";

const sha = (s) => createHash("sha256").update(s).digest("hex");

// What the fake reviewer knows: the drugs that fit each header code.
const FITS = {
  E11: ["metformin", "sitagliptin", "gliclazide", "empagliflozin"],
  E78: ["atorvastatin", "rosuvastatin", "pitavastatin"],
  F32: ["escitalopram", "sertraline", "fluoxetine"],
  I10: ["amlodipine", "losartan", "telmisartan"],
  J30: ["fexofenadine", "levocetirizine", "mometasone"],
  K29: ["lansoprazole", "famotidine", "rebamipide", "esomeprazole"],
  M17: ["celecoxib", "aceclofenac", "acetaminophen"],
  M54: ["eperisone", "aceclofenac", "tramadol", "celecoxib"],
};
const GOOD = /양호|잘 조절|목표 도달/;
const BAD = /불량|안 됨|미달/;

function line(note, tag) {
  return note.split("\n").find((l) => l.startsWith(`${tag}:`)) ?? "";
}

/** The fake's own judgement: [error?, the line it cites]. */
export function judge(note) {
  const code = /^#([A-Z][0-9]{2})/.exec(note)?.[1] ?? "";
  const P = line(note, "P"),
    A = line(note, "A"),
    O = line(note, "O");
  const drug = /^P:\s*([a-z]+)/.exec(P)?.[1];
  if (drug && FITS[code] && !FITS[code].includes(drug)) return [true, P];
  if (code === "M17" && /Lumbar|LBP|Lumbago/.test(A)) return [true, A];
  if (code === "M54" && /Knee/.test(A)) return [true, A];
  const high =
    Number(/HbA1c ([\d.]+)/.exec(O)?.[1] ?? 0) >= 7 ||
    Number(/FPG (\d+)/.exec(O)?.[1] ?? 0) >= 130 ||
    Number(/BP (\d+)\//.exec(O)?.[1] ?? 0) >= 140 ||
    Number(/LDL (\d+)/.exec(O)?.[1] ?? 0) >= 130;
  if (high && GOOD.test(A)) return [true, O];
  if (!high && /HbA1c|FPG|LDL|BP/.test(O) && BAD.test(A) && code !== "K29") return [true, A];
  return [false, A];
}

const fourLines = (evidence, error, conf = "0.8") =>
  `Evidence: "${evidence}"\n` +
  `Analysis: ${error ? "The cited line does not fit the rest of the note." : "The note is consistent."}\n` +
  `Confidence: ${conf}\nError: ${error ? "Yes" : "No"}`;

/**
 * skill: the share of notes the fake judges by its rule (the rest get a coin from the body hash);
 * quirks: reply styles and failures, by the body hash.
 * Returns a reply text, or { content, finish_reason?, reasoning_content?, http_error? }.
 */
export function noteErrorsPolicy({ skill = 0.8, quirks = true } = {}) {
  return (body) => {
    const user = body.messages.find((m) => m.role === "user")?.content ?? "";
    const note = (/Clinical note:\n([\s\S]*?)\n\nAnswer in/.exec(user)?.[1] ?? user).trim();
    const h = parseInt(sha(JSON.stringify(body.messages) + body.model).slice(0, 8), 16);
    let [error, cited] = judge(note);
    if ((h % 1000) / 1000 >= skill) {
      error = (h >> 10) % 2 === 0;
      cited = line(note, "P");
    }
    const answer = fourLines(cited, error);
    if (!quirks) return answer;
    switch (h % 16) {
      case 0:
        return `<think>먼저 진단과 약물을 확인한다. Error: ${error ? "No" : "Yes"}?</think>\n${answer}`;
      case 1: // cut at max_tokens before any Error line: no verdict
        return { content: answer.slice(0, answer.indexOf("Analysis")), finish_reason: "length" };
      case 2: // the template's slot left as it was: no verdict
        return answer.replace(/Error: (Yes|No)$/, "Error: No or Yes");
      case 3:
        return { content: answer, reasoning_content: "노트의 각 줄을 검토했다." };
      case 4:
        return answer.replace(/^(\w+):/gm, "**$1:**");
      case 5: // a closed reasoning block and an Error line, then cut: a verdict
        return { content: `<think>짧게 검토.</think>\n${answer}`, finish_reason: "length" };
      case 6:
        return answer.replace(/Error: (Yes|No)$/, (_, v) => `Error: ${v.toLowerCase()}`); // strict fails
      case 7:
        return h % 32 === 7 ? { http_error: 500 } : answer; // a permanent server error on ~3 % of notes
      default:
        return answer;
    }
  };
}

export const NOTE_ERRORS_POLICIES = {
  "note-errors": noteErrorsPolicy(),
  "note-errors-plain": noteErrorsPolicy({ quirks: false }),
  "note-errors-weak": noteErrorsPolicy({ skill: 0.3, quirks: false }),
};
