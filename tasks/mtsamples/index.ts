// mtsamples-replicate: HELM's MTSamples Replicate as MedARC runs it (docs/protocols/mtsamples.md).
import type { TaskModule } from "../task.js";
import { buildRequests } from "./prompts.js";
import { parsePlan } from "./parser.js";
import { judgeRequests } from "./judges.js";
import { score } from "./scorer.js";
import { impression, overlapJudge } from "./baselines.js";

export const task: TaskModule = {
  contract: 2,
  parts: {
    prompts: "prompts.ts",
    parse: "parser.ts",
    score: "scorer.ts",
    baselines: "baselines.ts",
    judge: "judges.ts",
  },
  buildRequests,
  parseReply: ({ reply }) => parsePlan(reply.text),
  score: ({ requests, parsed, judged }) => score(requests, parsed, judged),
  judgeRequests: ({ requests, parsed, templates }) => judgeRequests(requests, parsed, templates),
  params: {
    prompts: {
      variant: {
        type: "string",
        enum: ["helm", "medarc"],
        description: "helm: the case-sensitive split; medarc: case-insensitive",
      },
      use_think: { type: "boolean", description: "MedARC's step-by-step prompt with a <think> block" },
    },
  },
  baselines: {
    "medbench/impression": { reply: impression },
    "medbench/overlap-judge": { reply: overlapJudge },
  },
};
