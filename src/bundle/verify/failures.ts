// The requests of a live model (or judge) stage that got no answer: replies with an error, judge rows
// without a text. Read from a stage's outputs as its kind declares their record types.
import { readFileSync } from "../../util/builtins.js";
import type { StageKind } from "../../contract/stage.js";
import { carriesAnswers, readRecords, unanswered } from "../../contract/records.js";
import type { LiveReport } from "./types.js";

const textOf = (value: unknown) =>
  typeof value === "string"
    ? value
    : value instanceof Uint8Array
      ? Buffer.from(value).toString("utf8")
      : readFileSync((value as { file: string }).file, "utf8");

/** `items`, when given, gets request key -> item id for every record that carries one. */
export function failuresOf(
  stage: string,
  kind: StageKind | undefined,
  out: Record<string, unknown>,
  items?: Map<string, string>,
): LiveReport["failures"][number] {
  // The outputs whose record type carries model answers, as the stage kind declares them.
  const declared = kind && kind.outputs !== "release" ? Object.entries(kind.outputs) : [];
  const rows = declared.flatMap(([name, type]) =>
    out[name] === undefined || !carriesAnswers(type)
      ? []
      : readRecords(type, textOf(out[name])).map((record) => {
          const key = (record as { request_sha256?: unknown }).request_sha256;
          if (items && typeof key === "string") items.set(key, record.id);
          return { id: record.id, failed: unanswered(type, record) };
        }),
  );
  const failed = rows.filter((row) => row.failed);
  const ids = [...new Set(failed.map((row) => row.id))].sort();
  return { stage, failed: failed.length, total: rows.length, ids };
}
