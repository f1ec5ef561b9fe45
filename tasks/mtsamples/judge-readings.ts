// Each judge reply read as HELM reads it and as MedARC reads it (the score stage's; the prompt is
// judges.ts's).
import type { Json } from "../../src/util/json.js";
import { toJs } from "../../src/hash/python-json.js";
import { helmAnnotation, helmReading, medarcObject, medarcReading } from "./readings.js";

/** HELM: greedy {.*} across lines, parsed with Python's json; on "Expecting ',' delimiter" one } is
 *  appended, once; the annotation must hold the three criteria, each with score and explanation (exact
 *  keys). */
export function helmParse(text: string): Record<string, Json> | null {
  const annotation = helmAnnotation(text);
  return annotation ? (toJs(annotation) as Record<string, Json>) : null;
}

/** HELM's per-judge scores: int(score) of every member of the annotation (an extra criterion-shaped member
 *  counts); null when HELM drops the judge, or where HELM raises (medbench's choice: drop the judge). */
export function helmScores(text: string): number[] | null {
  const reading = helmReading(text);
  return reading.ok ? reading.scores : null;
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
