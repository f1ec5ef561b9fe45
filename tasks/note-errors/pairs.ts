// The pairs files (pairs_test.jsonl / pairs_train.jsonl) as this port reads them. Their field names are not
// published: FIELDS below is the one place that maps a file's names onto the record this task uses, and the
// shape assumed is written down in docs/protocols/note-errors.md ("The pairs record").

export type Category = "diagnosis" | "lab" | "pharmacotherapy";
export type SoapLine = "S" | "O" | "A" | "P";
export type Side = "error" | "clean";

/** One edited span: where it sits on each side and the text each side holds there. */
export interface Edit {
  line: SoapLine;
  error_text: string; // the inserted text on the error note
  clean_text: string; // the clinically equivalent replacement on the twin
  error_start: number | null; // character offsets in the error note, when the file gives them
  error_end: number | null;
  clean_start: number | null;
  clean_end: number | null;
}

export interface Pair {
  pair_id: string;
  error_note: string;
  clean_note: string;
  category: Category;
  rule: string; // DX05 … PH14
  condition: string; // the active condition's ICD-10 code (E11 … M54)
  edited_line: SoapLine;
  edits: Edit[];
  /** The header code each note carries (its own first line), the conjunction baseline's key. */
  header_code: string;
  /** The SOAP lines whose text is the evidence analysis's reference: the edited line, + A for LI06-LI09. */
  reference_lines: SoapLine[];
  /** The three-model item check showed this visit to a reviewer (item_check.exposure). */
  item_check_exposed: boolean;
  synthetic: boolean;
  /** Fields read as their default because no name of FIELDS was present (the real release refuses them). */
  defaulted: (keyof typeof FIELDS)[];
}

/** Canonical name -> the names a file may use for it, tried in order (the first present wins). */
export const FIELDS = {
  pair_id: ["pair_id", "id"],
  error_note: ["error_note", "error_text", "note_error"],
  clean_note: ["clean_note", "clean_text", "note_clean", "twin_note"],
  category: ["category", "error_category"],
  rule: ["rule", "rule_id"],
  condition: ["condition", "condition_code", "icd10"],
  edited_line: ["edited_line", "line", "soap_line"],
  edits: ["edits", "spans"],
  header_code: ["header_code"],
  reference_lines: ["reference_lines"],
  item_check_exposed: ["item_check_exposed", "exposed", "item_check"],
  synthetic: ["synthetic"],
} as const;

/** Rules whose reference also includes the A line (values edited against an A-line control statement). */
export const A_ALSO_COUNTS = new Set(["LI06", "LI07", "LI08", "LI09"]);
const CATEGORIES: readonly Category[] = ["diagnosis", "lab", "pharmacotherapy"];
const LINES: readonly SoapLine[] = ["S", "O", "A", "P"];

export class PairsError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    message: string,
  ) {
    super(`${file}:${line}: ${message}`);
  }
}

type Raw = Record<string, unknown>;

function pick(raw: Raw, name: keyof typeof FIELDS): unknown {
  for (const field of FIELDS[name]) if (raw[field] !== undefined) return raw[field];
  return undefined;
}

/** The code on a note's first line: "#M17 …", "[M17] …" or "M17 …" (an ICD-10 code at its start). */
export function headerCodeOf(note: string): string | null {
  const first = note.split("\n", 1)[0] ?? "";
  const match = /^\s*[#[(]?\s*([A-Z][0-9]{2}(?:\.[0-9A-Z]{1,4})?)\b/.exec(first);
  return match ? match[1]! : null;
}

/** The text of one SOAP line of a note ("A: …" -> "…"), or null when the note has no such line. */
export function soapLine(note: string, line: SoapLine): string | null {
  for (const noteLine of note.split("\n")) {
    const match = /^\s*([SOAP])\s*[:：)]\s?(.*)$/.exec(noteLine);
    if (match && match[1] === line) return match[2]!.trim();
  }
  return null;
}

function str(raw: Raw, name: keyof typeof FIELDS, where: () => PairsError): string {
  const value = pick(raw, name);
  if (typeof value !== "string" || value === "") throw where();
  return value;
}

function edit(value: unknown, fallbackLine: SoapLine): Edit | null {
  if (!value || typeof value !== "object") return null;
  const record = value as Raw;
  const num = (x: unknown) => (typeof x === "number" ? x : null);
  const text = (preferred: unknown, fallback: unknown) =>
    typeof preferred === "string" ? preferred : typeof fallback === "string" ? fallback : "";
  const line =
    typeof record.line === "string" && LINES.includes(record.line as SoapLine) ? record.line : fallbackLine;
  return {
    line: line as SoapLine,
    error_text: text(record.error_text, record.inserted),
    clean_text: text(record.clean_text, record.replacement),
    error_start: num(record.error_start ?? record.start),
    error_end: num(record.error_end ?? record.end),
    clean_start: num(record.clean_start),
    clean_end: num(record.clean_end),
  };
}

/** One record of a pairs file, mapped through FIELDS; a missing required field names its line and field. */
export function pairFromRecord(raw: Raw, file: string, lineNo: number): Pair {
  const bad =
    (name: string, why = "is missing or empty") =>
    () =>
      new PairsError(
        file,
        lineNo,
        `field ${name} (${FIELDS[name as keyof typeof FIELDS]?.join(" or ") ?? name}) ${why}`,
      );
  const pair_id = str(raw, "pair_id", bad("pair_id"));
  const error_note = str(raw, "error_note", bad("error_note"));
  const clean_note = str(raw, "clean_note", bad("clean_note"));
  const category = str(raw, "category", bad("category")) as Category;
  if (!CATEGORIES.includes(category))
    throw bad("category", `is ${JSON.stringify(category)}, not one of ${CATEGORIES.join(", ")}`)();
  const rule = str(raw, "rule", bad("rule"));
  const edited_line = str(raw, "edited_line", bad("edited_line")) as SoapLine;
  if (!LINES.includes(edited_line))
    throw bad("edited_line", `is ${JSON.stringify(edited_line)}, not one of S, O, A, P`)();
  const header = pick(raw, "header_code");
  const header_code = typeof header === "string" && header ? header : headerCodeOf(error_note);
  if (!header_code) throw bad("header_code", "is missing and the error note's first line holds no code")();
  const cond = pick(raw, "condition");
  const condition = typeof cond === "string" && cond ? cond : header_code;
  const rawEdits = pick(raw, "edits");
  const edits = (Array.isArray(rawEdits) ? rawEdits : [])
    .map((e) => edit(e, edited_line))
    .filter((e): e is Edit => e !== null);
  const refs = pick(raw, "reference_lines");
  const reference_lines = Array.isArray(refs)
    ? (refs.filter((entry) => LINES.includes(entry as SoapLine)) as SoapLine[])
    : A_ALSO_COUNTS.has(rule) && edited_line !== "A"
      ? [edited_line, "A" as SoapLine]
      : [edited_line];
  return {
    pair_id,
    error_note,
    clean_note,
    category,
    rule,
    condition,
    edited_line,
    edits,
    header_code,
    reference_lines,
    item_check_exposed: pick(raw, "item_check_exposed") === true,
    synthetic: pick(raw, "synthetic") === true,
    // Defaults the page states (header code, reference lines) are not guesses; these are.
    defaulted: (["condition", "edits", "item_check_exposed"] as const).filter(
      (field) => pick(raw, field) === undefined,
    ),
  };
}

/** A whole pairs file (JSON lines; blank lines skipped). Duplicate pair ids are refused. */
export function readPairs(text: string, file: string): Pair[] {
  const out: Pair[] = [];
  const seen = new Set<string>();
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      throw new PairsError(file, i + 1, `not a JSON object (${(e as Error).message})`);
    }
    if (!raw || typeof raw !== "object" || Array.isArray(raw))
      throw new PairsError(file, i + 1, "not a JSON object");
    const pair = pairFromRecord(raw as Raw, file, i + 1);
    if (seen.has(pair.pair_id)) throw new PairsError(file, i + 1, `pair_id ${pair.pair_id} appears twice`);
    seen.add(pair.pair_id);
    out.push(pair);
  });
  return out;
}

export const noteOf = (pair: Pair, side: Side) => (side === "error" ? pair.error_note : pair.clean_note);
export const itemId = (pair: Pair, side: Side) => `${pair.pair_id}/${side}`;
