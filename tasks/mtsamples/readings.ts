// A judge reply read as HELM's annotator and jury metric read it, and as MedARC's environment reads it
// (docs/protocols/mtsamples.md, "Judges"; checked against the reference code by
// tests/tasks/mtsamples-fidelity.test.ts).
// Both parse with Python's json (NaN and Infinity are numbers). Where the reference raises, the reading says
// which Python exception, so that the scorer can apply medbench's written choice for that case.
import { PyJsonError, pyJsonLoads } from "../../src/hash/python-json.js";
import type { PyValue } from "../../src/hash/pyjson.js";
import { pyStrip } from "./instances.js";

type PyDict = { [key: string]: PyValue };
const isDict = (value: PyValue | undefined): value is PyDict =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const has = (dict: PyDict, key: string) => Object.prototype.hasOwnProperty.call(dict, key);

/** A Python exception where the reference code raises. */
export class PyCrash extends Error {
  constructor(readonly type: "TypeError" | "KeyError" | "ValueError" | "OverflowError" | "AttributeError") {
    super(type);
  }
}

// Python reads any Unicode decimal digit (category Nd) in int() and float(); they come in runs of ten.
const ND = /\p{Nd}/u;
function asciiDigits(text: string): string {
  let out = "";
  for (const ch of text) {
    if (ch >= "0" && ch <= "9") out += ch;
    else if (ND.test(ch)) {
      let start = ch.codePointAt(0)!;
      while (ND.test(String.fromCodePoint(start - 1))) start--;
      out += String((ch.codePointAt(0)! - start) % 10);
    } else out += ch;
  }
  return out;
}

/** Python int(v): bool, int, float (truncated), a string of a base-10 integer; raises as Python does. */
export function pyInt(value: PyValue | undefined): bigint {
  if (typeof value === "boolean") return value ? 1n : 0n;
  if (typeof value === "bigint") return value;
  if (typeof value === "number") {
    if (Number.isNaN(value)) throw new PyCrash("ValueError");
    if (!Number.isFinite(value)) throw new PyCrash("OverflowError");
    return BigInt(Math.trunc(value));
  }
  if (typeof value === "string") {
    const text = asciiDigits(pyStrip(value));
    if (!/^[+-]?[0-9](_?[0-9])*$/.test(text)) throw new PyCrash("ValueError");
    return BigInt(text.replace(/_/g, ""));
  }
  throw new PyCrash("TypeError");
}

/** Python float(s) of a string, or null where it raises ValueError. */
export function pyFloatOfString(value: string): number | null {
  const text = asciiDigits(pyStrip(value));
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(text);
  if (special) return /^n/i.test(special[2]!) ? NaN : special[1] === "-" ? -Infinity : Infinity;
  const dec = "[0-9](?:_?[0-9])*";
  if (!new RegExp(`^[+-]?(?:${dec}(?:\\.(?:${dec})?)?|\\.${dec})(?:[eE][+-]?${dec})?$`).test(text))
    return null;
  return Number(text.replace(/_/g, ""));
}

// Python's min(a, b) and max(a, b): the first argument unless the second compares smaller (larger).
const pyMin = (first: number, second: number) => (second < first ? second : first);
const pyMax = (first: number, second: number) => (second > first ? second : first);

// ------------------------------------------------------------------------------------------------ HELM
const CRITERIA = ["accuracy", "completeness", "clarity"];

/** Python's `sub in container` for the containers json.loads gives; TypeError for the others. */
function pyIn(sub: string, container: PyValue | undefined): boolean {
  if (typeof container === "string") return container.includes(sub);
  if (Array.isArray(container)) return container.some((x) => x === sub);
  if (isDict(container)) return has(container, sub);
  throw new PyCrash("TypeError");
}

/** HELM's annotation of one judge reply: the object, or null where HELM drops the judge. */
export function helmAnnotation(text: string): PyDict | null {
  const match = /\{[\s\S]*\}/.exec(text);
  let out = match ? match[0] : text;
  let obj: PyValue;
  try {
    try {
      obj = pyJsonLoads(out);
    } catch (e) {
      if (!(e instanceof PyJsonError) || e.kind !== "decode") return null; // caught by the outer except
      if (e.msg !== "Expecting ',' delimiter") return null;
      out += "}";
      obj = pyJsonLoads(out);
    }
    for (const criterion of CRITERIA) {
      if (!pyIn(criterion, obj)) return null;
      const member = isDict(obj) ? obj[criterion] : undefined;
      if (!isDict(obj)) throw new PyCrash("TypeError"); // str/list indexed by a str
      if (!pyIn("score", member) || !pyIn("explanation", member)) return null;
    }
  } catch {
    return null; // every exception is caught by _annotate_with_model
  }
  return isDict(obj) ? obj : null;
}

/** HELM's jury metric on one annotation: int(val["score"]) of every member, in order. */
export function helmMemberScores(annotation: PyDict): bigint[] {
  return Object.values(annotation).map((val) => {
    if (!isDict(val)) throw new PyCrash("TypeError");
    if (!has(val, "score")) throw new PyCrash("KeyError");
    return pyInt(val.score);
  });
}

export type HelmReading = { ok: true; scores: number[] } | { ok: false; crash?: PyCrash["type"] };

export function helmReading(text: string): HelmReading {
  const annotation = helmAnnotation(text);
  if (!annotation) return { ok: false };
  try {
    const scores = helmMemberScores(annotation);
    // The metric's sum / len: Python raises OverflowError when the mean is too large for a float.
    const sum = scores.reduce((total, score) => total + score, 0n);
    if (scores.length && !Number.isFinite(Number(sum) / scores.length)) throw new PyCrash("OverflowError");
    return { ok: true, scores: scores.map(Number) };
  } catch (e) {
    if (e instanceof PyCrash) return { ok: false, crash: e.type };
    throw e;
  }
}

// ------------------------------------------------------------------------------------------------ MedARC
/** MedARC's JSONParser: from the last `}`, the first `{` searching back whose span parses to an object. */
export function medarcObject(text: string): PyDict | null {
  const last = text.lastIndexOf("}");
  if (last < 0) return null;
  for (
    let open = text.lastIndexOf("{", last);
    open >= 0;
    open = open ? text.lastIndexOf("{", open - 1) : -1
  ) {
    let value: PyValue;
    try {
      value = pyJsonLoads(text.slice(open, last + 1));
    } catch (e) {
      if (e instanceof PyJsonError && e.kind === "decode") continue;
      throw new PyCrash("ValueError"); // not a JSONDecodeError: the reward function raises
    }
    if (isDict(value)) return value;
  }
  return null;
}

function coerceScore(value: PyValue | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") {
    const x = Number(value);
    if (!Number.isFinite(x)) throw new PyCrash("OverflowError"); // float(int) too large
    return x;
  }
  if (typeof value === "number") return value;
  if (typeof value === "string") return pyStrip(value) === "" ? null : pyFloatOfString(value);
  return null;
}

export interface MedarcReading {
  score: number;
  valid: number;
  crash?: PyCrash["type"];
}

/** normalize_helm_reward over the three dimensions of the parsed object (exact keys). */
export function medarcReading(text: string): MedarcReading {
  try {
    const obj = medarcObject(text);
    let acc = 0;
    let count = 0;
    for (const criterion of CRITERIA) {
      const member = obj && has(obj, criterion) ? obj[criterion] : undefined;
      if (member !== undefined && !isDict(member)) throw new PyCrash("AttributeError"); // .get on a non-dict
      const score = coerceScore(member && has(member, "score") ? member.score : undefined);
      if (score === null) continue;
      acc += (pyMax(1, pyMin(5, score)) - 1) / 4;
      count++;
    }
    return { score: count ? pyMax(0, pyMin(1, acc / count)) : 0, valid: count };
  } catch (e) {
    if (e instanceof PyCrash) return { score: 0, valid: 0, crash: e.type };
    throw e;
  }
}
