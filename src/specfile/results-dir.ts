// The rule for `results.dir` (docs/spec-files.md): a template whose placeholders are {slug} and declared
// variables, filled into a path of plain names strictly inside the project's `results/` folder. Checked when
// the spec is loaded, so that no command ever computes a results folder outside results/ (`.git`, `specs`,
// the project root, results/ itself), and no placeholder or variable value silently drops a level.
import { isAbsolute } from "node:path";
import type { Json } from "../util/json.js";

/** The one folder results folders live in, relative to the project root. */
export const RESULTS_ROOT = "results";

/** What is wrong with a results.dir, and how to fix it. */
export interface DirProblem {
  message: string;
  fix: string;
}

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** A placeholder's value as a path component: anything but letters, digits, `.`, `_`, `-` becomes `_`, so a
 *  value never adds a folder level (`medbench/prior` -> `medbench_prior`). */
const component = (value: Json | undefined) => String(value ?? "").replace(/[^A-Za-z0-9._-]+/g, "_");

/** Whether a value can fill a placeholder: a list or a map has no name of its own (it would fill as
 *  `[object Object]` or `a,b`). */
export const fillable = (value: Json | undefined): boolean =>
  value === null || value === undefined || typeof value !== "object";

/**
 * The values the variables in results.dir fill it with, as text (what a folder name is made of): recorded in
 * the results folder's marker, so that two values that fill the folder alike (`a/b` and `a_b`, both `a_b`)
 * never share it (src/runner/results/ownership.ts). The slug is the spec's own, which the marker names.
 */
export function placeholderValues(
  template: string,
  variables: Record<string, Json>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [, name] of template.matchAll(PLACEHOLDER))
    if (name !== "slug" && name! in variables) out[name!] = String(variables[name!] ?? "");
  return out;
}

/** results.dir filled with the slug and the variables: the folder (relative to the project, `/` separated),
 *  or why it is refused. */
export function fillResultsDir(
  template: string,
  slug: string,
  variables: Record<string, Json>,
): { dir: string } | DirProblem {
  const problem = templateProblem(template, variables) ?? valueProblem(template, slug, variables);
  if (problem) return problem;
  const dir = template.replace(PLACEHOLDER, (_placeholder, name: string) =>
    component(name === "slug" ? slug : variables[name]),
  );
  return filledProblem(template, dir) ?? { dir };
}

/** A template that leaves the project, names an unknown placeholder or has a stray brace. */
function templateProblem(template: string, variables: Record<string, Json>): DirProblem | null {
  const leaves =
    isAbsolute(template) || /^[A-Za-z]:/.test(template) || template.split(/[\\/]/).includes("..");
  if (leaves)
    return {
      message: `results.dir ${template} leaves the project`,
      fix: "keep results paths relative and inside the project (no absolute path, no `..`)",
    };
  const known = ["slug", ...Object.keys(variables)];
  for (const [, name] of template.matchAll(PLACEHOLDER))
    if (!known.includes(name!))
      return {
        message: `results.dir ${template}: unknown placeholder {${name}}`,
        fix: `use {slug} or a declared variable: ${known.map((name) => `{${name}}`).join(", ")}`,
      };
  if (/[{}]/.test(template.replace(PLACEHOLDER, "")))
    return {
      message: `results.dir ${template}: a brace that opens or closes no placeholder`,
      fix: "write placeholders as {name}, e.g. results/{slug}/{model}",
    };
  return null;
}

/** A placeholder whose value names no folder of its own: a list or a map, or empty, `.` or `..`. */
function valueProblem(template: string, slug: string, variables: Record<string, Json>): DirProblem | null {
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    const value = name === "slug" ? slug : variables[name!];
    if (!fillable(value))
      return {
        message:
          `results.dir ${template}: {${name}} would be filled from ` +
          `${Array.isArray(value) ? "a list" : "a map"} ` +
          `(the variable ${name} is ${JSON.stringify(value)}), which names no folder`,
        fix: `give ${name} a plain value (a name or a number, e.g. --var ${name}=run1)`,
      };
    const filled = component(value);
    if (filled === "" || filled === "." || filled === "..")
      return {
        message:
          `results.dir ${template}: {${name}} would be ${JSON.stringify(filled)} ` +
          `(the variable ${name} is ${JSON.stringify(value ?? null)}), which names no folder of its own`,
        fix: `give ${name} a plain name (e.g. --var ${name}=run1): not empty, \`.\` or \`..\``,
      };
  }
  return null;
}

/** A filled folder that is not a plain path strictly inside results/. */
function filledProblem(template: string, dir: string): DirProblem | null {
  const parts = dir.split("/");
  if (template.includes("\\") || parts.some((part) => part === "" || part === "." || part === ".."))
    return {
      message: `results.dir ${template} is not a plain path (an empty part, \`.\`, or a backslash)`,
      fix: "write it as names separated by `/`, e.g. results/{slug}/{model}",
    };
  if (parts[0] !== RESULTS_ROOT || parts.length < 2)
    return {
      message:
        `results.dir ${template} is not a folder inside the project's ${RESULTS_ROOT}/ ` +
        "(medbench writes results nowhere else)",
      fix: `name a folder below ${RESULTS_ROOT}/, e.g. ${RESULTS_ROOT}/{slug}/{model}`,
    };
  return null;
}
