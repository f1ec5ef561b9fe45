// Reading a results folder's files (metrics.json, items.jsonl) written by a build, as report and compare do:
// a damaged file is a clear refusal naming it, never a stack trace.
import { readFileSync } from "../util/builtins.js";
import { UsageError } from "../errors.js";
import { parseJsonLines } from "../util/json.js";

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
    const bad = lines.findIndex((line) => {
      try {
        if (line.trim()) JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    throw new UsageError(`${shown}:${bad + 1} is not valid JSON (${(e as Error).message}): ${REBUILD}`);
  }
}

/** What is missing from a metrics.json for it to be a run's result, or null when it is one. */
export function metricsProblem(parsed: unknown): string | null {
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return "metrics.json is not a JSON object";
  const fields = parsed as Record<string, unknown>;
  const missing = [
    typeof fields.slug === "string" ? null : "slug",
    typeof fields.spec_hash === "string" ? null : "spec_hash",
    fields.metrics !== null && typeof fields.metrics === "object" && !Array.isArray(fields.metrics)
      ? null
      : "metrics",
  ].filter((file) => file !== null);
  return missing.length ? `metrics.json has no ${missing.join(", ")}` : null;
}
