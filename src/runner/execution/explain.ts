// Why a stage's key changed, in words: what differs between the key record it was built with and its
// record now (status, the build's stage lines, verify's replay).
import { jsonDiff, pointerWords, type Json } from "../../util/json.js";
import type { KeyRecord } from "../keys/keys.js";

/** The source a compiled module was made from (dist/x/y.js -> x/y.ts), as a user edits it. */
const sourceOf = (file: string) => (file.startsWith("dist/") ? file.slice(5).replace(/\.js$/, ".ts") : file);

const show = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));

/** The code files (as their sources) that differ between two key records' code, in words. */
export function codeChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const out: string[] = [];
  for (const file of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort())
    if (before[file] !== after[file])
      out.push(
        file in before
          ? file in after
            ? `code changed: ${sourceOf(file)}`
            : `code no longer run: ${sourceOf(file)}`
          : `code now run: ${sourceOf(file)}`,
      );
  return out;
}

/** The declared environment variables whose values differ between two records' task parts, in words. */
function environmentChanges(before: Json, after: Json): string[] {
  const envOf = (task: Json) =>
    ((task as { environment?: Record<string, string | null> } | null)?.environment ?? {}) as Record<
      string,
      string | null
    >;
  const was = envOf(before),
    now = envOf(after);
  return [...new Set([...Object.keys(was), ...Object.keys(now)])]
    .sort()
    .filter((name) => was[name] !== now[name])
    .map((name) =>
      !(name in was)
        ? `environment variable now read: ${name}`
        : !(name in now)
          ? `environment variable no longer read: ${name}`
          : `environment variable changed: ${name}`,
    );
}

const withoutEnvironment = (task: Json): Json => {
  if (task === null || typeof task !== "object" || Array.isArray(task) || !("environment" in task))
    return task;
  const { environment: _environment, ...rest } = task;
  return rest;
};

/** The differences between two key records, in words. `paths`: the spec's file inputs by name (a changed
 *  template is named by its file). */
export function explain(before: KeyRecord, after: KeyRecord, paths: Record<string, string> = {}): string[] {
  const out: string[] = [];
  if (before.recipe !== after.recipe) out.push(`hash recipe changed: ${before.recipe} -> ${after.recipe}`);
  if (before.kind !== after.kind) out.push(`kind changed: ${before.kind} -> ${after.kind}`);
  for (const change of jsonDiff(before.params, after.params))
    out.push(`params changed: ${pointerWords(change.path)} ${show(change.from)} -> ${show(change.to)}`);
  out.push(...codeChanges(before.code, after.code));
  const [taskBefore, taskAfter] = [(before.task ?? null) as Json, (after.task ?? null) as Json];
  out.push(...environmentChanges(taskBefore, taskAfter));
  for (const change of jsonDiff(withoutEnvironment(taskBefore), withoutEnvironment(taskAfter)))
    out.push(`task parts changed: ${pointerWords(change.path)} ${show(change.from)} -> ${show(change.to)}`);
  const packages = new Set([...Object.keys(before.packages ?? {}), ...Object.keys(after.packages ?? {})]);
  for (const name of [...packages].sort())
    if (before.packages?.[name] !== after.packages?.[name])
      out.push(
        `package changed: ${name} ${before.packages?.[name] ?? "(none)"} -> ` +
          (after.packages?.[name] ?? "(none)"),
      );
  for (const name of new Set([...Object.keys(before.inputs), ...Object.keys(after.inputs)])) {
    const was = before.inputs[name] ?? {},
      now = after.inputs[name] ?? {};
    const changed = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter(
      (output) => was[output] !== now[output],
    );
    const file = changed.length === 1 && changed[0] === "file";
    const detail = file ? (paths[name] ? `: ${paths[name]}` : "") : `: ${changed.join(", ")}`;
    if (changed.length) out.push(`input ${name} changed${detail}`);
  }
  for (const change of jsonDiff(before.identity as Json, after.identity as Json))
    out.push(`source changed: ${pointerWords(change.path)} ${show(change.from)} -> ${show(change.to)}`);
  return out;
}
