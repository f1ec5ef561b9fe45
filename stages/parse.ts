// parse: the task's parser on each whole reply; an unparseable reply is a wrong answer, never a failed build.
import type { StageKind } from "../src/runner/stage.js";
import { readRecords, writeRecords, type ParsedRecord } from "../src/contract/records.js";

export const parse: StageKind = {
  kind: "parse",
  inputs: { requests: { outputs: { requests: "requests" } }, replies: { outputs: { replies: "replies" } } },
  outputs: { parsed: "parsed" },
  params: {},
  taskPart: "parse",
  async run(ctx) {
    const requests = readRecords("requests", ctx.inputs.requests!.text("requests"));
    const replies = new Map(
      readRecords("replies", ctx.inputs.replies!.text("replies")).map((r) => [r.id, r]),
    );
    const rows = requests.map((request): ParsedRecord => {
      const reply = replies.get(request.id);
      if (!reply || reply.error !== null)
        return { id: request.id, api_error: reply?.error ?? "no reply", parsed: null };
      return {
        id: request.id,
        api_error: null,
        parsed: ctx.task.parseReply({ reply, request, params: ctx.params }),
      };
    });
    return { parsed: writeRecords("parsed", rows) };
  },
};
