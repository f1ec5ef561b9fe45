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

const typeOf = (value: Json): ParamType =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number"
        ? Number.isInteger(value)
          ? "integer"
          : "number"
        : (typeof value as ParamType);

const show = (value: Json) => JSON.stringify(value);

/** A readable name of a declaration's type, e.g. "an integer", "a number or null". */
export function describeType(decl: ParamDecl): string {
  const types = typeof decl.type === "string" ? [decl.type] : [...decl.type];
  const word: Record<ParamType, string> = {
    integer: "an integer",
    number: "a number",
    string: "a string",
    boolean: "true or false",
    object: "a mapping",
    array: "a list",
    null: "null",
  };
  return types.map((type) => word[type]).join(" or ");
}

function range(decl: ParamDecl): string {
  const lo =
    decl.minimum !== undefined
      ? `≥ ${decl.minimum}`
      : decl.exclusiveMinimum !== undefined
        ? `> ${decl.exclusiveMinimum}`
        : "";
  const hi =
    decl.maximum !== undefined
      ? `≤ ${decl.maximum}`
      : decl.exclusiveMaximum !== undefined
        ? `< ${decl.exclusiveMaximum}`
        : "";
  return [lo, hi].filter(Boolean).join(" and ");
}

export function checkValue(value: Json, decl: ParamDecl, at = ""): ParamProblem[] {
  const types = typeof decl.type === "string" ? [decl.type] : decl.type;
  const type = typeOf(value);
  if (!(types.includes(type) || (type === "integer" && types.includes("number")))) {
    return [
      { pointer: at, message: `must be ${describeType(decl)}, not ${show(value)}`, fix: fixFor(decl) },
    ];
  }
  if (decl.enum && !decl.enum.some((e) => show(e) === show(value)))
    return [
      {
        pointer: at,
        message: `${show(value)} is not allowed`,
        fix: `use one of: ${decl.enum.map((e) => show(e)).join(", ")}`,
      },
    ];
  if (typeof value === "number" && !Number.isFinite(value))
    return [{ pointer: at, message: `${value} is not a finite number`, fix: fixFor(decl) }];
  if (typeof value === "number") {
    const bad =
      (decl.minimum !== undefined && value < decl.minimum) ||
      (decl.maximum !== undefined && value > decl.maximum) ||
      (decl.exclusiveMinimum !== undefined && value <= decl.exclusiveMinimum) ||
      (decl.exclusiveMaximum !== undefined && value >= decl.exclusiveMaximum);
    if (bad)
      return [{ pointer: at, message: `${value} is out of range`, fix: `use a value ${range(decl)}` }];
  }
  if (typeof value === "string" && decl.pattern && !new RegExp(decl.pattern, "u").test(value))
    return [{ pointer: at, message: `${show(value)} is not of the expected form`, fix: fixFor(decl) }];
  if (Array.isArray(value) && decl.items)
    return value.flatMap((x, i) => checkValue(x, decl.items!, `${at}/${i}`));
  if (type === "object" && value !== null && !Array.isArray(value) && typeof value === "object")
    return checkObject(value as Record<string, Json>, decl, at);
  return [];
}

function checkObject(value: Record<string, Json>, decl: ParamDecl, at: string): ParamProblem[] {
  const out: ParamProblem[] = [];
  for (const required of decl.required ?? [])
    if (!(required in value))
      out.push({ pointer: at, message: `missing \`${required}\``, fix: `add \`${required}\`` });
  const props = decl.properties ?? {};
  for (const [key, x] of Object.entries(value)) {
    const pointer = `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    if (key in props) out.push(...checkValue(x, props[key]!, pointer));
    else if (typeof decl.additionalProperties === "object")
      out.push(...checkValue(x, decl.additionalProperties, pointer));
    else if (decl.additionalProperties === false || decl.properties)
      out.push({
        pointer: pointer,
        message: `unknown key \`${key}\``,
        fix: Object.keys(props).length ? `use one of: ${Object.keys(props).join(", ")}` : "remove it",
      });
  }
  return out;
}

function fixFor(decl: ParamDecl): string {
  if (decl.enum) return `use one of: ${decl.enum.map((e) => show(e)).join(", ")}`;
  const bounds = range(decl);
  const described = decl.description ? ` (${decl.description})` : "";
  return `write ${describeType(decl)}${bounds ? ` ${bounds}` : ""}${described}`;
}
