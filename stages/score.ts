// score: the task's scorer over parsed replies; per-item verdicts, metric rows and tables.
import type { StageKind, StageOutput } from "../src/contract/stage.js";
import { stableJson } from "../src/util/json.js";
import {
  readRecords,
  writeRecords,
  writeRecordsFile,
  type ItemRecord,
  type ParsedRecord,
  type ReplyRecord,
} from "../src/contract/records.js";
import { inputRecords } from "./records-io.js";
import type { JudgedReplies, ScoreOutput, TaskModule, TaskRequest } from "../tasks/task.js";
import type { Json } from "../src/util/json.js";

/** Records by their configuration, in first-seen order (records without one form a single group). */
function byConfiguration<T>(records: T[], configurationOf: (record: T) => unknown): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const record of records) {
    const configuration = configurationOf(record);
    const configurationName = typeof configuration === "string" ? configuration : "";
    if (!out.has(configurationName)) out.set(configurationName, []);
    out.get(configurationName)!.push(record);
  }
  return out;
}

function judgedReplies(rows: Iterable<{ id: string; judge: string; text: string | null }>): JudgedReplies {
  const byJudge = new Map<string, Record<string, string | null>>();
  for (const row of rows) {
    if (!byJudge.has(row.judge)) byJudge.set(row.judge, {});
    byJudge.get(row.judge)![row.id] = row.text;
  }
  return [...byJudge].map(([judge, replies]) => ({ judge, replies }));
}

type Outputs<I = string> = { items: I; metrics: string; tables: string };

/** The score stage's outputs from each configuration's score (one group: a task without configurations);
 *  `writeItems` writes the items (in memory for a replay, to a file as they go for a build). */
function assemble<I>(
  outs: Map<string, ScoreOutput>,
  task: TaskModule,
  params: Json,
  writeItems: (items: Iterable<ItemRecord>) => I,
): Outputs<I> {
  if (outs.size <= 1) {
    const out = [...outs.values()][0] ?? { items: [], metrics: [], paired: [], tables: {} };
    return {
      items: writeItems(out.items),
      metrics: stableJson({ metrics: out.metrics, paired: out.paired }),
      // The scoring parameters travel with the tables, so every result records how it was scored.
      tables: stableJson({ ...out.tables, scoring_params: params }),
    };
  }
  const headline = outs.has(task.headline ?? "") ? task.headline! : [...outs.keys()][0]!;
  const head = outs.get(headline)!;
  return {
    items: writeItems(
      (function* () {
        for (const scored of outs.values()) yield* scored.items;
      })(),
    ),
    metrics: stableJson({
      metrics: head.metrics,
      paired: head.paired,
      headline,
      configurations: Object.fromEntries(
        [...outs].map(([name, scored]) => [name, { metrics: scored.metrics, paired: scored.paired }]),
      ),
    }),
    tables: stableJson({
      ...head.tables,
      by_configuration: Object.fromEntries([...outs].map(([name, scored]) => [name, scored.tables])),
      scoring_params: params,
    }),
  };
}

/**
 * The score stage's outputs again from a run's items and replies alone (the task's `rescore`): what verify
 * replays for a private release, whose requests are not bundled. Null when the task cannot.
 */
function rescoreOutputs(
  task: TaskModule,
  items: string,
  replies: string | undefined,
  params: Json,
): Outputs | null {
  if (!task.rescore) return null;
  const byId =
    replies === undefined
      ? null
      : new Map(readRecords("replies", replies).map((reply) => [reply.id, reply]));
  const groups = byConfiguration(readRecords("items", items), (item) => item.meta.configuration);
  const outs = new Map(
    [...groups].map(([name, its]) => [
      name,
      task.rescore!({ items: its, replies: byId && its.map((i) => byId.get(i.id) ?? null), params }),
    ]),
  );
  return assemble(outs, task, params, (rows) => writeRecords("items", [...rows]));
}

export const score: StageKind = {
  kind: "score",
  // A private release's bundle has no requests: the score comes again from its items and the replies.
  replayWithheld: ({ task, own, input, params }) => {
    const replies = input("replies", "replies");
    // Without the replies (withheld as well), the items' verdicts stand and the rest is scored again.
    return own.items === undefined ? null : rescoreOutputs(task, own.items, replies, params);
  },
  inputs: {
    requests: { outputs: { requests: "requests" } },
    parsed: { outputs: { parsed: "parsed" } },
    replies: { outputs: { replies: "replies" }, optional: true, description: "the whole reply records" },
    judged: { outputs: { judged: "judged" }, optional: true },
  },
  outputs: { items: "items", metrics: "metrics", tables: "tables" },
  params: {},
  taskParts: () => ["score"],
  // Which configuration's metrics are the run's (several configurations scored).
  taskData: (task) => ({ headline: task.headline ?? null }),
  async run(ctx) {
    const requests = [...(await inputRecords(ctx, "requests", "requests"))];
    // By id, only what the scorer is given of each record (a parse's value, not its row).
    const parsed = new Map<string, ParsedRecord["parsed"]>();
    for (const record of await inputRecords(ctx, "parsed", "parsed")) parsed.set(record.id, record.parsed);
    let replies: Map<string, ReplyRecord> | null = null;
    if (ctx.inputs.replies) {
      replies = new Map();
      for (const record of await inputRecords(ctx, "replies", "replies")) replies.set(record.id, record);
    }
    const judged = ctx.inputs.judged
      ? judgedReplies(await inputRecords(ctx, "judged", "judged"))
      : undefined;
    const scoreOf = (group: TaskRequest[]) =>
      ctx.task.score({
        requests: group,
        parsed: group.map((request) => parsed.get(request.id) ?? null),
        replies: group.map((request) => replies?.get(request.id) ?? null),
        params: ctx.params,
        judged,
      });
    // Each request configuration is scored on its own; the headline's metrics are the run's.
    const groups = byConfiguration(requests, (request) => request.configuration);
    const scores = new Map([...groups].map(([name, group]) => [name, scoreOf(group)]));
    return assemble(
      scores,
      ctx.task,
      ctx.params,
      (rows): StageOutput => writeRecordsFile("items", rows, ctx.tempPath()),
    );
  },
};
