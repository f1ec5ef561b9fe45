// score: the task's scorer over parsed replies; per-item verdicts, metric rows and tables.
import type { StageKind } from "../src/runner/stage.js";
import { jsonLines, parseJsonLines, stableJson } from "../src/util/json.js";
import type { JudgedReplies, ParsedReply, TaskRequest } from "../tasks/task.js";

function judgedReplies(text: string): JudgedReplies {
  const byJudge = new Map<string, Record<string, string | null>>();
  for (const r of parseJsonLines<{ id: string; judge: string; text: string | null }>(text)) {
    if (!byJudge.has(r.judge)) byJudge.set(r.judge, {});
    byJudge.get(r.judge)![r.id] = r.text;
  }
  return [...byJudge].map(([judge, replies]) => ({ judge, replies }));
}

export const score: StageKind = {
  kind: "score",
  params: [],
  taskPart: "score",
  async run(ctx) {
    const requests = parseJsonLines<TaskRequest>(ctx.inputs.requests!.text("requests"));
    const parsed = new Map(
      parseJsonLines<{ id: string; parsed: ParsedReply | null }>(ctx.inputs.parsed!.text("parsed")).map(
        (r) => [r.id, r.parsed],
      ),
    );
    const judged = ctx.inputs.judged ? judgedReplies(ctx.inputs.judged.text("judged")) : undefined;
    const out = ctx.task.score(
      requests,
      requests.map((r) => parsed.get(r.id) ?? null),
      ctx.params,
      judged,
    );
    return {
      items: jsonLines(out.items),
      metrics: stableJson({ metrics: out.metrics, paired: out.paired }),
      // The scoring parameters travel with the tables, so every result records how it was scored.
      tables: stableJson({ ...out.tables, scoring_params: ctx.params }),
    };
  },
};
