// score: the task's scorer over parsed replies; per-item verdicts, metric rows and tables.
import type { StageKind } from "../src/runner/stage.js";
import { stableJson } from "../src/util/json.js";
import { readRecords, writeRecords } from "../src/contract/records.js";
import type { JudgedReplies } from "../tasks/task.js";

function judgedReplies(text: string): JudgedReplies {
  const byJudge = new Map<string, Record<string, string | null>>();
  for (const r of readRecords("judged", text)) {
    if (!byJudge.has(r.judge)) byJudge.set(r.judge, {});
    byJudge.get(r.judge)![r.id] = r.text;
  }
  return [...byJudge].map(([judge, replies]) => ({ judge, replies }));
}

export const score: StageKind = {
  kind: "score",
  inputs: {
    requests: { outputs: { requests: "requests" } },
    parsed: { outputs: { parsed: "parsed" } },
    replies: { outputs: { replies: "replies" }, optional: true, description: "the whole reply records" },
    judged: { outputs: { judged: "judged" }, optional: true },
  },
  outputs: { items: "items", metrics: "metrics", tables: "tables" },
  params: {},
  taskPart: "score",
  async run(ctx) {
    const requests = readRecords("requests", ctx.inputs.requests!.text("requests"));
    const parsed = new Map(
      readRecords("parsed", ctx.inputs.parsed!.text("parsed")).map((r) => [r.id, r.parsed]),
    );
    const replies = ctx.inputs.replies
      ? new Map(readRecords("replies", ctx.inputs.replies.text("replies")).map((r) => [r.id, r]))
      : null;
    const judged = ctx.inputs.judged ? judgedReplies(ctx.inputs.judged.text("judged")) : undefined;
    const out = ctx.task.score({
      requests,
      parsed: requests.map((r) => parsed.get(r.id) ?? null),
      replies: requests.map((r) => replies?.get(r.id) ?? null),
      params: ctx.params,
      judged,
    });
    return {
      items: writeRecords("items", out.items),
      metrics: stableJson({ metrics: out.metrics, paired: out.paired }),
      // The scoring parameters travel with the tables, so every result records how it was scored.
      tables: stableJson({ ...out.tables, scoring_params: ctx.params }),
    };
  },
};
