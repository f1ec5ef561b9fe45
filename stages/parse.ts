// parse: the task's parser on each reply; an unparseable reply is a wrong answer, never a failed build.
import type { StageKind } from "../src/runner/stage.js";
import { jsonLines, parseJsonLines } from "../src/util/json.js";
import type { TaskRequest } from "../tasks/task.js";
import type { ReplyRecord } from "./model.js";

export const parse: StageKind = {
  kind: "parse",
  params: [],
  taskPart: "parse",
  async run(ctx) {
    const requests = parseJsonLines<TaskRequest>(ctx.inputs.requests!.text("requests"));
    const replies = new Map(
      parseJsonLines<ReplyRecord>(ctx.inputs.replies!.text("replies")).map((r) => [r.id, r]),
    );
    const rows = requests.map((req) => {
      const reply = replies.get(req.id);
      if (!reply || reply.error !== null)
        return { id: req.id, api_error: reply?.error ?? "no reply", parsed: null };
      return { id: req.id, api_error: null, parsed: ctx.task.parseReply(reply.text, req, ctx.params) };
    });
    return { parsed: jsonLines(rows) };
  },
};
