// Why a stage's key changed, in words: what differs between the key record it was built with and its
// record now (status, the build's stage lines, verify's replay).
import { jsonDiff, pointerWords, type Json } from "../util/json.js";
import type { KeyRecord } from "./keys.js";

/** The source a compiled module was made from (dist/x/y.js -> x/y.ts), as a user edits it. */
const sourceOf = (file: string) => (file.startsWith("dist/") ? file.slice(5).replace(/\.js$/, ".ts") : file);

const show = (v: unknown) => (v === undefined ? "(none)" : JSON.stringify(v));

/** The code files (as their sources) that differ between two key records' code, in words. */
export function codeChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const out: string[] = [];
  for (const f of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort())
    if (before[f] !== after[f])
      out.push(
        f in before
          ? f in after
            ? `code changed: ${sourceOf(f)}`
            : `code no longer run: ${sourceOf(f)}`
          : `code now run: ${sourceOf(f)}`,
      );
  return out;
}

/** The declared environment variables whose values differ between two records' task parts, in words. */
function environmentChanges(before: Json, after: Json): string[] {
  const envOf = (t: Json) =>
    ((t as { environment?: Record<string, string | null> } | null)?.environment ?? {}) as Record<
      string,
      string | null
    >;
  const a = envOf(before),
    b = envOf(after);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .sort()
    .filter((name) => a[name] !== b[name])
    .map((name) =>
      !(name in a)
        ? `environment variable now read: ${name}`
        : !(name in b)
          ? `environment variable no longer read: ${name}`
          : `environment variable changed: ${name}`,
    );
}

const withoutEnvironment = (t: Json): Json => {
  if (t === null || typeof t !== "object" || Array.isArray(t) || !("environment" in t)) return t;
  const { environment: _, ...rest } = t;
  return rest;
};

/** The differences between two key records, in words. `paths`: the spec's file inputs by name (a changed
 *  template is named by its file). */
export function explain(before: KeyRecord, after: KeyRecord, paths: Record<string, string> = {}): string[] {
  const out: string[] = [];
  if (before.recipe !== after.recipe) out.push(`hash recipe changed: ${before.recipe} -> ${after.recipe}`);
  if (before.kind !== after.kind) out.push(`kind changed: ${before.kind} -> ${after.kind}`);
  for (const d of jsonDiff(before.params, after.params))
    out.push(`params changed: ${pointerWords(d.path)} ${show(d.from)} -> ${show(d.to)}`);
  out.push(...codeChanges(before.code, after.code));
  const [taskBefore, taskAfter] = [(before.task ?? null) as Json, (after.task ?? null) as Json];
  out.push(...environmentChanges(taskBefore, taskAfter));
  for (const d of jsonDiff(withoutEnvironment(taskBefore), withoutEnvironment(taskAfter)))
    out.push(`task parts changed: ${pointerWords(d.path)} ${show(d.from)} -> ${show(d.to)}`);
  const packages = new Set([...Object.keys(before.packages ?? {}), ...Object.keys(after.packages ?? {})]);
  for (const p of [...packages].sort())
    if (before.packages?.[p] !== after.packages?.[p])
      out.push(
        `package changed: ${p} ${before.packages?.[p] ?? "(none)"} -> ${after.packages?.[p] ?? "(none)"}`,
      );
  for (const name of new Set([...Object.keys(before.inputs), ...Object.keys(after.inputs)])) {
    const a = before.inputs[name] ?? {},
      b = after.inputs[name] ?? {};
    const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((o) => a[o] !== b[o]);
    const file = changed.length === 1 && changed[0] === "file";
    const detail = file ? (paths[name] ? `: ${paths[name]}` : "") : `: ${changed.join(", ")}`;
    if (changed.length) out.push(`input ${name} changed${detail}`);
  }
  for (const d of jsonDiff(before.identity as Json, after.identity as Json))
    out.push(`source changed: ${pointerWords(d.path)} ${show(d.from)} -> ${show(d.to)}`);
  return out;
}
