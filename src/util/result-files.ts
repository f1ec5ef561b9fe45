// Reading a results folder's files (metrics.json, items.jsonl) written by a build, as report and compare do:
// a damaged file is a clear refusal naming it, never a stack trace.
import { readFileSync } from "./builtins.js";
import { UsageError } from "../errors.js";
import { parseJsonLines } from "./json.js";

const REBUILD = "rebuild it (medbench build SPEC writes the folder whole) or remove that results folder";

/** A results file's JSON (its path as the user sees it names it in the refusal). */
export function readResultJson(file: string, shown = file): unknown {
  const text = readFileSync(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${shown} is not valid JSON (${(e as Error).message}): ${REBUILD}`);
  }
}

/** A results file's JSON lines, the damaged line named. */
export function readResultLines<T>(file: string, shown = file): T[] {
  const lines = readFileSync(file, "utf8").split("\n");
  try {
    return parseJsonLines<T>(lines.join("\n"));
  } catch (e) {
    const bad = lines.findIndex((l) => {
      try {
        if (l.trim()) JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    throw new UsageError(`${shown}:${bad + 1} is not valid JSON (${(e as Error).message}): ${REBUILD}`);
  }
}

/** What is missing from a metrics.json for it to be a run's result, or null when it is one. */
export function metricsProblem(m: unknown): string | null {
  if (m === null || typeof m !== "object" || Array.isArray(m)) return "metrics.json is not a JSON object";
  const o = m as Record<string, unknown>;
  const missing = [
    typeof o.slug === "string" ? null : "slug",
    typeof o.spec_hash === "string" ? null : "spec_hash",
    o.metrics !== null && typeof o.metrics === "object" && !Array.isArray(o.metrics) ? null : "metrics",
  ].filter((k) => k !== null);
  return missing.length ? `metrics.json has no ${missing.join(", ")}` : null;
}
