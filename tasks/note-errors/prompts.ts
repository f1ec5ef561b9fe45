// One request per pair and side: system + user, the note formatted into the configuration's prompt
// (MEDERRBENCH_EN_PROMPTS[prompt]; the files in specs/note-errors/prompts/, a reconstruction until the
// original is dropped in). The meta carries ids and labels only, never note text
// (items and bundles are built from it).
import type { TaskRequest } from "../task.js";
import { itemId, noteOf, type Pair, type Side } from "./pairs.js";
import { evidenceRef } from "./evidence.js";

export interface PromptSet {
  system: string;
  user: string;
}

/** The user template with {note} replaced (only that placeholder; braces in a note are left alone). */
export function formatUser(template: string, note: string): string {
  return template.trimEnd().split("{note}").join(note);
}

export interface NoteMeta {
  pair_id: string;
  side: Side;
  category: string;
  rule: string;
  condition: string;
  edited_line: string;
  header_code: string;
  exposed: boolean;
  synthetic: boolean;
  /** The page's instance id, `<pair_id>/<side>` (item ids carry the configuration in front of it). */
  instance_id: string;
}

export function metaOf(pair: Pair, side: Side): NoteMeta {
  return {
    pair_id: pair.pair_id,
    side,
    category: pair.category,
    rule: pair.rule,
    condition: pair.condition,
    edited_line: pair.edited_line,
    header_code: pair.header_code,
    exposed: pair.item_check_exposed,
    synthetic: pair.synthetic,
    instance_id: itemId(pair, side),
  };
}

/** Requests in file order, error note before twin. */
export function noteRequests(pairs: Pair[], prompt: PromptSet): TaskRequest[] {
  const out: TaskRequest[] = [];
  for (const pair of pairs)
    for (const side of ["error", "clean"] as Side[])
      out.push({
        id: itemId(pair, side),
        messages: [
          { role: "system", content: prompt.system.trimEnd() },
          { role: "user", content: formatUser(prompt.user, noteOf(pair, side)) },
        ],
        meta: { ...metaOf(pair, side), evidence_ref: { ...evidenceRef(pair, side) } },
      });
  return out;
}
