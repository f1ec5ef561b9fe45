// parse: the task's parser on each whole reply; an unparseable reply is a wrong answer, never a failed
// build.
import type { StageKind } from "../src/contract/stage.js";
import { RecordsWriter, type ParsedRecord, type ReplyRecord } from "../src/contract/records.js";
import type { ParseInput } from "../src/contract/task.js";
import { parseEach } from "../src/runner/code/task-guard.js";
import { inputRecords } from "./records-io.js";

/** Replies parsed together, under one watchdog of the task-code deadline (each call still held to it). */
const RUN = 256;

export const parse: StageKind = {
  kind: "parse",
  inputs: { requests: { outputs: { requests: "requests" } }, replies: { outputs: { replies: "replies" } } },
  outputs: { parsed: "parsed" },
  params: {},
  taskParts: () => ["parse"],
  async run(ctx) {
    const requests = await inputRecords(ctx, "requests", "requests");
    const replies = await inputRecords(ctx, "replies", "replies");
    // The model stage writes replies in request order: each is read when its request comes; replies read
    // ahead (out of order, or of no request) wait in `ahead`; in the usual case nothing waits (ids are
    // unique).
    const ahead = new Map<string, ReplyRecord>();
    const replyOf = (id: string): ReplyRecord | undefined => {
      const waiting = ahead.get(id);
      if (waiting) return (ahead.delete(id), waiting);
      // next(), not for-of: leaving a for-of would close the generator.
      for (let step = replies.next(); !step.done; step = replies.next()) {
        if (step.value.id === id) return step.value;
        ahead.set(step.value.id, step.value);
      }
      return undefined;
    };
    const out = new RecordsWriter<"parsed">(ctx.tempPath());
    // Rows in request order; those with a reply to parse wait for their run's parsing.
    let rows: (ParsedRecord | ParseInput)[] = [];
    let waiting: ParseInput[] = [];
    const flush = () => {
      const parsed = parseEach(ctx.task, waiting);
      let next = 0;
      for (const row of rows)
        out.write("reply" in row ? { id: row.request.id, api_error: null, parsed: parsed[next++]! } : row);
      rows = [];
      waiting = [];
    };
    for (const request of requests) {
      const reply = replyOf(request.id);
      if (!reply || reply.error !== null)
        rows.push({ id: request.id, api_error: reply?.error ?? "no reply", parsed: null });
      else {
        const input = { reply, request, params: ctx.params };
        rows.push(input);
        waiting.push(input);
        if (waiting.length === RUN) flush();
      }
    }
    flush();
    return { parsed: out.close() };
  },
};
