// Instances exactly as HELM builds them from the notes (shared docs: mtsamples.md), and MedARC's variant.
//   HELM: text = read().strip(); for each of PLAN:, SUMMARY:, FINDINGS: present in text.upper(), the
//   section is text.split(KEY)[1] up to its first newline, stripped. The split is case-sensitive while the
//   test is not: a key present only in another case raises, and any exception skips the whole file.
//   Reference = plan, else summary, else findings (the first non-empty); none: skipped.
//   Input = the text before the first case-sensitive PLAN:, stripped.
//   MedARC: the key found in text.upper(), slicing the original text, on the file as read (not stripped):
//   a note without PLAN: is its own input, trailing newline and all.

export type Variant = "helm" | "medarc";
export type Source = "PLAN" | "SUMMARY" | "FINDINGS";

export interface Instance {
  file: string;
  input: string;
  reference: string;
  source: Source;
}
export type Extracted = { ok: true; instance: Instance } | { ok: false; file: string; reason: string };

const KEYS: Source[] = ["PLAN", "SUMMARY", "FINDINGS"];

// Python's str.isspace() set (JS trim() differs: it strips U+FEFF and keeps U+001C-001F and U+0085).
const PY_WS =
  "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const STRIP = new RegExp(`^${PY_WS}+|${PY_WS}+$`, "g");
/** Python's str.strip(). */
export const pyStrip = (text: string) => text.replace(STRIP, "");

function sectionHelm(text: string, key: Source): string {
  const marker = `${key}:`;
  if (!text.toUpperCase().includes(marker)) return "";
  const parts = text.split(marker);
  if (parts.length < 2) throw new Error(`${marker} appears only in another case`); // IndexError in Python
  return pyStrip(parts[1]!.split("\n")[0]!);
}

// MedARC finds the key in text.upper() and slices the original text at that index.
function sectionMedarc(text: string, key: Source): string {
  const i = text.toUpperCase().indexOf(`${key}:`);
  if (i < 0) return "";
  return pyStrip(text.slice(i + key.length + 1).split("\n")[0]!);
}

export function extract(file: string, raw: string, variant: Variant): Extracted {
  // MedARC reads the file without strip(): a note with no PLAN: is its input as read, trailing newline kept.
  const text = variant === "helm" ? pyStrip(raw) : raw;
  const sections: Record<Source, string> = { PLAN: "", SUMMARY: "", FINDINGS: "" };
  try {
    for (const section of KEYS)
      sections[section] = variant === "helm" ? sectionHelm(text, section) : sectionMedarc(text, section);
  } catch (e) {
    return { ok: false, file, reason: (e as Error).message };
  }
  const source = KEYS.find((section) => sections[section] !== "");
  if (!source) return { ok: false, file, reason: "no PLAN, SUMMARY or FINDINGS section" };
  let input: string;
  if (variant === "helm") input = pyStrip(text.split("PLAN:")[0]!);
  else {
    const i = text.toUpperCase().indexOf("PLAN:");
    input = i >= 0 ? pyStrip(text.slice(0, i)) : text;
  }
  return { ok: true, instance: { file, input, reference: sections[source], source } };
}
