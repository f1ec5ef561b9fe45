// The judges: the judge prompt, and each judge reply read as HELM reads it and as MedARC reads it
// (shared docs: mtsamples.md; the choices where it is silent: docs/protocols/mtsamples.md).
import type { ParsedReply, TaskModule, TaskRequest } from "../task.js";
import type { Json } from "../../src/util/json.js";
import { toJs } from "../../src/util/python-json.js";
import { helmAnnotation, helmReading, medarcObject, medarcReading } from "./readings.js";

export const CRITERIA = ["accuracy", "completeness", "clarity"] as const;

/** Every placeholder filled in one pass, each value verbatim (as Python's string.Template.substitute fills
 *  HELM's prompt): a value holding `{gold_response}` or `$&` is inserted as it is, never filled again. */
export function fillJudge(template: string, v: { patient: string; response: string; gold: string }): string {
  const values: Record<string, string> = {
    patient_information: v.patient,
    response: v.response,
    gold_response: v.gold,
  };
  return template.replace(
    /\{(patient_information|response|gold_response)\}/g,
    (_, name: string) => values[name]!,
  );
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

/** HELM: greedy {.*} across lines, parsed with Python's json; on "Expecting ',' delimiter" one } is appended,
 *  once; the annotation must hold the three criteria, each with score and explanation (exact keys). */
export function helmParse(text: string): Record<string, Json> | null {
  const a = helmAnnotation(text);
  return a ? (toJs(a) as Record<string, Json>) : null;
}

/** HELM's per-judge scores: int(score) of every member of the annotation (an extra criterion-shaped member
 *  counts); null when HELM drops the judge, or where HELM raises (medbench's choice: drop the judge). */
export function helmScores(text: string): number[] | null {
  const r = helmReading(text);
  return r.ok ? r.scores : null;
}

/** MedARC: from the last }, the first { searching back whose span parses (Python's json) to an object. */
export function medarcParse(text: string): Record<string, Json> | null {
  try {
    const obj = medarcObject(text);
    return obj ? (toJs(obj) as Record<string, Json>) : null;
  } catch {
    return null;
  }
}

/** MedARC's judge score in [0, 1]: normalize_helm_reward (exact keys; scores coerced as Python's float,
 *  clamped to 1-5 with Python's min/max, mapped to (s - 1) / 4, averaged over the valid ones;
 *  0 when none). */
export function medarcScore(text: string): { score: number; valid: number; crash?: string } {
  return medarcReading(text);
}

/** The task's judgeRequests (its `parts.judge`). */
export const taskJudgeRequests: NonNullable<TaskModule["judgeRequests"]> = ({
  requests,
  parsed,
  templates,
}) => judgeRequests(requests, parsed, templates);
