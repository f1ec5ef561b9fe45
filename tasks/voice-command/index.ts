// kor-surgical-robot-voice-command, ported from its task document (docs/protocols/voice-command.md).
import type { TaskModule } from "../task.js";
import { buildRequests } from "./prompts.js";
import { parseReply } from "./parser.js";
import { score } from "./scorer.js";
import { keywordStop, prior } from "./baselines.js";

export const task: TaskModule = {
  parts: { prompts: "prompts.ts", parse: "parser.ts", score: "scorer.ts", baselines: "baselines.ts" },
  buildRequests,
  parseReply: (text, request) => parseReply(text, request),
  score: (requests, parsed, params) =>
    score(requests, parsed, params as { slot_compare?: "casefold" | "exact" }),
  params: { prompts: ["prompt"], score: ["slot_compare"] },
  baselines: { "medbench/prior": prior, "medbench/keyword-stop": keywordStop },
};
