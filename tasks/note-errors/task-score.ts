// The score part: items, metrics and tables from the parsed replies, and the rescore verify replays.
import type { ItemVerdict, MetricRows, RescoreInput, ScoreInput, ScoreOutput } from "../task.js";
import type { Json } from "../../src/util/json.js";
import { parseVerdict, type ParsedVerdict } from "./verdict.js";
import { parserClass } from "./parser-classes.js";
import { noteItem, pairRows, summary, type NoteItem } from "./scorer.js";
import { reportedMetrics } from "./metrics.js";
import { toUnitRow } from "./rows.js";
import { metaOf } from "./files.js";

export function score({ requests, parsed, replies }: ScoreInput): ScoreOutput {
  const items = requests.map((request, i) => {
    const parsedVerdict =
      (parsed[i]?.value as unknown as ParsedVerdict | undefined) ?? parseVerdict(noReply(replies[i]));
    const reply = replies[i];
    const view = reply && reply.error === null ? reply : noReply(reply);
    const item = noteItem(
      { id: request.id, meta: metaOf(request) },
      parsedVerdict,
      parserClass(view, parsedVerdict),
    );
    // Items hold ids, labels and verdicts only: `parsed` is the verdict, never the Evidence text.
    const meta = {
      ...item.meta,
      ...(request.configuration ? { configuration: request.configuration } : {}),
    };
    return { ...item, unit: item.meta.pair_id, meta, parsed: parsedVerdict.verdict as Json };
  });
  return scoreItems(items);
}

// A private bundle has no requests: the verdicts come again from the replies, and the Evidence matches
// (which need the note's reference lines) from the items.
// A public bundle withholds the replies too (they quote the notes): then the items' verdicts are taken as
// recorded and only the metrics and tables are computed again from them.
export const rescore = ({ items, replies }: RescoreInput): ScoreOutput =>
  scoreItems(
    items.map((item, i) => {
      if (replies === null) return item as unknown as NoteItem & { unit: string; parsed: Json };
      const reply = replies[i];
      const view = reply && reply.error === null ? reply : noReply(reply);
      const parsedVerdict = parseVerdict(view);
      const kept = item.verdicts as unknown as NoteItem["verdicts"];
      const has = parsedVerdict.evidence !== null;
      const verdicts: NoteItem["verdicts"] = {
        verdict: parsedVerdict.verdict,
        strict: parsedVerdict.strict,
        reason: parsedVerdict.reason,
        truncated: parsedVerdict.truncated,
        think: parsedVerdict.think,
        evidence: has,
        evidence_hit: has && kept.evidence_hit,
        evidence_hit_chars: has && kept.evidence_hit_chars,
        span_hit: has && kept.span_hit,
        p_line_hit: kept.p_line_hit,
        parser_class: parserClass(view, parsedVerdict),
      };
      return {
        ...item,
        parsed: parsedVerdict.verdict as Json,
        verdicts: verdicts as unknown as Record<string, Json>,
      };
    }) as unknown as (NoteItem & { unit: string; parsed: Json })[],
  );

/** Metrics and tables from scored items (the score stage's, and the rescore's). */
function scoreItems(items: (NoteItem & { unit: string; parsed: Json })[]): ScoreOutput {
  const rows = pairRows(items);
  const unitRows = rows.map(toUnitRow);
  const metrics: MetricRows[] = reportedMetrics().map((metric) => ({
    name: metric.name,
    label: metric.label,
    rows: unitRows,
    statistic: metric.name,
    ...(metric.name === "bcr" ? { primary: true } : {}),
    ...(metric.unit ? { unit: metric.unit } : {}),
  }));
  return { items: items as unknown as ItemVerdict[], metrics, paired: [], tables: summary(rows, items) };
}

/** A request without a reply record (or with an API error) is parsed as an API error: no verdict. */
function noReply(reply: { error: string | null } | null | undefined) {
  return { text: "", error: reply?.error ?? "no reply", finish_reason: null, reasoning: false };
}
