// mtsamples-replicate: HELM's MTSamples Replicate as MedARC runs it (docs/protocols/mtsamples.md).
import type { TaskModule } from "../task.js";
import { buildRequests } from "./prompts.js";
import { parsePlan } from "./parser.js";
import { judgeRequests } from "./judges.js";
import { score } from "./scorer.js";
import { impression, overlapJudge } from "./baselines.js";

export const task: TaskModule = {
  parts: {
    prompts: "prompts.ts",
    parse: "parser.ts",
    score: "scorer.ts",
    baselines: "baselines.ts",
    judge: "judges.ts",
  },
  buildRequests,
  parseReply: (text) => parsePlan(text),
  score: (requests, parsed, _params, judged) => score(requests, parsed, judged),
  judgeRequests: (requests, parsed, templates) => judgeRequests(requests, parsed, templates),
  params: { prompts: ["variant", "use_think"] },
  baselines: { "medbench/impression": impression, "medbench/overlap-judge": overlapJudge },
};
