// Checks a value against a ParamDecl (the JSON-schema subset stage kinds and tasks declare). Hand-written,
// not ajv: a build checks every stage's parameters on every start, and compiling schemas would cost more
// than a no-op build may take. Each problem comes back with the JSON pointer of the value at fault.
import type { Json } from "../util/json.js";
import type { ParamDecl, ParamType } from "./declarations.js";

export interface ParamProblem {
  pointer: string; // below the parameters object, e.g. /paired/rng
  message: string;
  fix: string;
}

const typeOf = (v: Json): ParamType =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "array"
      : typeof v === "number"
        ? Number.isInteger(v)
          ? "integer"
          : "number"
        : (typeof v as ParamType);

const show = (v: Json) => JSON.stringify(v);

/** A readable name of a declaration's type, e.g. "an integer", "a number or null". */
export function describeType(d: ParamDecl): string {
  const types = typeof d.type === "string" ? [d.type] : [...d.type];
  const word: Record<ParamType, string> = {
    integer: "an integer",
    number: "a number",
    string: "a string",
    boolean: "true or false",
    object: "a mapping",
    array: "a list",
    null: "null",
  };
  return types.map((t) => word[t]).join(" or ");
}

function range(d: ParamDecl): string {
  const lo =
    d.minimum !== undefined
      ? `≥ ${d.minimum}`
      : d.exclusiveMinimum !== undefined
        ? `> ${d.exclusiveMinimum}`
        : "";
  const hi =
    d.maximum !== undefined
      ? `≤ ${d.maximum}`
      : d.exclusiveMaximum !== undefined
        ? `< ${d.exclusiveMaximum}`
        : "";
  return [lo, hi].filter(Boolean).join(" and ");
}

export function checkValue(v: Json, d: ParamDecl, at = ""): ParamProblem[] {
  const types = typeof d.type === "string" ? [d.type] : d.type;
  const t = typeOf(v);
  if (!(types.includes(t) || (t === "integer" && types.includes("number")))) {
    return [{ pointer: at, message: `must be ${describeType(d)}, not ${show(v)}`, fix: fixFor(d) }];
  }
  if (d.enum && !d.enum.some((e) => show(e) === show(v)))
    return [
      {
        pointer: at,
        message: `${show(v)} is not allowed`,
        fix: `use one of: ${d.enum.map((e) => show(e)).join(", ")}`,
      },
    ];
  if (typeof v === "number" && !Number.isFinite(v))
    return [{ pointer: at, message: `${v} is not a finite number`, fix: fixFor(d) }];
  if (typeof v === "number") {
    const bad =
      (d.minimum !== undefined && v < d.minimum) ||
      (d.maximum !== undefined && v > d.maximum) ||
      (d.exclusiveMinimum !== undefined && v <= d.exclusiveMinimum) ||
      (d.exclusiveMaximum !== undefined && v >= d.exclusiveMaximum);
    if (bad) return [{ pointer: at, message: `${v} is out of range`, fix: `use a value ${range(d)}` }];
  }
  if (typeof v === "string" && d.pattern && !new RegExp(d.pattern, "u").test(v))
    return [{ pointer: at, message: `${show(v)} is not of the expected form`, fix: fixFor(d) }];
  if (Array.isArray(v) && d.items) return v.flatMap((x, i) => checkValue(x, d.items!, `${at}/${i}`));
  if (t === "object" && v !== null && !Array.isArray(v) && typeof v === "object")
    return checkObject(v as Record<string, Json>, d, at);
  return [];
}

function checkObject(v: Record<string, Json>, d: ParamDecl, at: string): ParamProblem[] {
  const out: ParamProblem[] = [];
  for (const r of d.required ?? [])
    if (!(r in v)) out.push({ pointer: at, message: `missing \`${r}\``, fix: `add \`${r}\`` });
  const props = d.properties ?? {};
  for (const [k, x] of Object.entries(v)) {
    const p = `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    if (k in props) out.push(...checkValue(x, props[k]!, p));
    else if (typeof d.additionalProperties === "object")
      out.push(...checkValue(x, d.additionalProperties, p));
    else if (d.additionalProperties === false || d.properties)
      out.push({
        pointer: p,
        message: `unknown key \`${k}\``,
        fix: Object.keys(props).length ? `use one of: ${Object.keys(props).join(", ")}` : "remove it",
      });
  }
  return out;
}

function fixFor(d: ParamDecl): string {
  if (d.enum) return `use one of: ${d.enum.map((e) => show(e)).join(", ")}`;
  const r = range(d);
  return `write ${describeType(d)}${r ? ` ${r}` : ""}${d.description ? ` (${d.description})` : ""}`;
}
