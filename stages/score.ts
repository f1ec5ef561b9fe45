// score: the task's scorer over parsed replies; per-item verdicts, metric rows and tables.
import type { StageKind } from "../src/runner/stage.js";
import { jsonLines, parseJsonLines, stableJson } from "../src/util/json.js";
import type { ParsedReply, TaskRequest } from "../tasks/task.js";

export const score: StageKind = {
  kind: "score",
  taskPart: "score",
  async run(ctx) {
    const requests = parseJsonLines<TaskRequest>(ctx.inputs.requests!.text("requests"));
    const parsed = new Map(parseJsonLines<{ id: string; parsed: ParsedReply | null }>(ctx.inputs.parsed!.text("parsed")).map((r) => [r.id, r.parsed]));
    const out = ctx.task.score(requests, requests.map((r) => parsed.get(r.id) ?? null), ctx.params);
    return {
      items: jsonLines(out.items),
      metrics: stableJson({ metrics: out.metrics, paired: out.paired }),
      // The scoring parameters travel with the tables, so every result records how it was scored.
      tables: stableJson({ ...out.tables, scoring_params: ctx.params }),
    };
  },
};
