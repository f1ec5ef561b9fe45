// The judges: the judge prompt, and each judge reply read as HELM reads it and as MedARC reads it
// (shared docs: mtsamples.md; the choices where it is silent: docs/protocols/mtsamples.md).
import type { ParsedReply, TaskRequest } from "../task.js";
import type { Json } from "../../src/util/json.js";

export const CRITERIA = ["accuracy", "completeness", "clarity"] as const;

export function fillJudge(template: string, v: { patient: string; response: string; gold: string }): string {
  return template
    .replace(/\{patient_information\}/g, () => v.patient)
    .replace(/\{response\}/g, () => v.response)
    .replace(/\{gold_response\}/g, () => v.gold);
}

export function judgeRequests(
  requests: TaskRequest[],
  parsed: (ParsedReply | null)[],
  templates: Record<string, string>,
): TaskRequest[] {
  const template = templates.judge;
  if (!template) throw new Error("the judge stage needs a `judge` template input");
  const out: TaskRequest[] = [];
  requests.forEach((r, i) => {
    const p = parsed[i];
    if (!p || !p.ok) return; // no plan to judge (an API error, or an empty reply)
    const meta = r.meta as { input: string; reference: string };
    out.push({
      id: r.id,
      messages: [
        {
          role: "user",
          content: fillJudge(template, {
            patient: meta.input,
            response: String(p.value),
            gold: meta.reference,
          }),
        },
      ],
      meta: {},
    });
  });
  return out;
}

/** Python's json.loads error "Expecting ',' delimiter" is V8's "Expected ',' or '}' / ']' after …". */
const EXPECTING_COMMA = /Expected ',' or '[}\]]'/;

/** HELM: greedy {.*} across lines, parsed; on "Expecting ',' delimiter" one } is appended, once. */
export function helmParse(text: string): Record<string, Json> | null {
  const m = /\{[\s\S]*\}/.exec(text);
  if (!m) return null;
  try {
    return JSON.parse(m[0]) as Record<string, Json>;
  } catch (e) {
    if (!EXPECTING_COMMA.test((e as Error).message)) return null;
    try {
      return JSON.parse(m[0] + "}") as Record<string, Json>;
    } catch {
      return null;
    }
  }
}

/** HELM's per-judge scores: int(score) per criterion; the judge is dropped when a criterion lacks score or
 *  explanation, or int() fails. Criterion keys are matched case-insensitively. */
export function helmScores(text: string): number[] | null {
  const obj = helmParse(text);
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) return null;
  const lower = Object.fromEntries(Object.entries(obj).map(([k, v]) => [k.toLowerCase(), v]));
  const scores: number[] = [];
  for (const c of CRITERIA) {
    const v = lower[c] as Record<string, Json> | undefined;
    if (!v || typeof v !== "object" || !("score" in v) || !("explanation" in v)) return null;
    const n = pyInt(v.score ?? null);
    if (n === null) return null;
    scores.push(n);
  }
  return scores;
}

/** Python int(): ints, floats truncated toward zero, strings of an integer; anything else fails. */
function pyInt(v: Json): number | null {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : null;
  if (typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v)) return Number(v.trim());
  return null;
}

/** MedARC: from the first {, the longest span ending at a } (searching back from the last) that parses. */
export function medarcParse(text: string): Record<string, Json> | null {
  const start = text.indexOf("{");
  if (start < 0) return null;
  for (let end = text.lastIndexOf("}"); end > start; end = text.lastIndexOf("}", end - 1)) {
    try {
      const v = JSON.parse(text.slice(start, end + 1)) as Json;
      if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, Json>;
    } catch {
      /* search further back */
    }
  }
  return null;
}

/** MedARC's judge score in [0, 1]: each valid criterion clamped to 1-5 and mapped to (s - 1) / 4, averaged
 *  over the valid criteria; 0 when none is valid (or the reply does not parse). */
export function medarcScore(text: string): { score: number; valid: number } {
  const obj = medarcParse(text);
  if (!obj) return { score: 0, valid: 0 };
  const lower = Object.fromEntries(Object.entries(obj).map(([k, v]) => [k.toLowerCase(), v]));
  const values: number[] = [];
  for (const c of CRITERIA) {
    const v = lower[c];
    const raw = v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, Json>).score : v;
    const n =
      typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
    if (Number.isFinite(n)) values.push((Math.min(5, Math.max(1, n)) - 1) / 4);
  }
  if (!values.length) return { score: 0, valid: 0 };
  return { score: values.reduce((a, b) => a + b, 0) / values.length, valid: values.length };
}
