// kor-surgical-robot-voice-command, ported from its task document (docs/protocols/voice-command.md).
import type { TaskModule } from "../task.js";
import { buildRequests } from "./prompts.js";
import { parseTaskReply } from "./parser.js";
import { scoreTask } from "./scorer.js";
import { keywordStop, prior } from "./baselines.js";
import { SUBSETS } from "./release.js";

export const task: TaskModule = {
  contract: 2,
  // Each stage is keyed on its part's module and what it imports (docs/tasks.md, Parts).
  parts: { prompts: "prompts.ts", parse: "parser.ts", score: "scorer.ts", baselines: "baselines.ts" },
  buildRequests,
  parseReply: parseTaskReply,
  score: scoreTask,
  params: {
    prompts: { prompt: { type: "string", enum: ["voice-command-v0.1"], description: "the prompt version" } },
    score: {
      slot_compare: {
        type: "string",
        enum: ["casefold", "exact"],
        description: "slot values compared trimmed and case-insensitive, or exactly",
      },
    },
  },
  baselines: { "medbench/prior": { reply: prior }, "medbench/keyword-stop": { reply: keywordStop } },
  subsets: Object.keys(SUBSETS),
  // The document's compare.py: per subset, clusters of one command group, Python random seeded 0.
  compare: {
    verdicts: [{ name: "exact", label: "exact match" }],
    cluster: "group",
    by: "subset",
    leaveOut: "api_error",
    paired: { resamples: 2000, seed: 0, rng: "python" },
  },
};
