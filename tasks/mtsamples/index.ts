// mtsamples-replicate: HELM's MTSamples Replicate as MedARC runs it (docs/protocols/mtsamples.md).
import type { TaskModule } from "../task.js";
import { buildRequests } from "./prompts.js";
import { parseTaskReply } from "./parser.js";
import { taskJudgeRequests } from "./judges.js";
import { scoreTask } from "./scorer.js";
import { impression, overlapJudge } from "./baselines.js";

export const task: TaskModule = {
  contract: 2,
  // Each stage is keyed on its part's module and what it imports (docs/tasks.md, Parts).
  parts: {
    prompts: "prompts.ts",
    parse: "parser.ts",
    score: "scorer.ts",
    baselines: "baselines.ts",
    judge: "judges.ts",
  },
  buildRequests,
  parseReply: parseTaskReply,
  score: scoreTask,
  judgeRequests: taskJudgeRequests,
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
