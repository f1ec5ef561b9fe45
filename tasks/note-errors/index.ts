// syn-snuh-note-errors: paired clinical error detection, ported from its task document
// (docs/protocols/note-errors.md holds every choice where the document is silent).
import type { RequestConfiguration, TaskModule } from "../task.js";
import { buildRequests } from "./task-prompts.js";
import { parseReply } from "./task-parse.js";
import { rescore, score } from "./task-score.js";
import { BASELINES } from "./task-baselines.js";
import { STATISTICS } from "./rows.js";

/** spec.request.configurations, as the task builds them (tests check the two agree). */
const CONFIGURATIONS: Record<string, RequestConfiguration> = {
  "conservative-greedy": { prompt: "conservative", generation: { temperature: 0 } },
  "conservative-sample": { prompt: "conservative", generation: { temperature: 0.7, top_p: 0.9 } },
  "neutral-greedy": { prompt: "neutral", generation: { temperature: 0 } },
  "neutral-sample": { prompt: "neutral", generation: { temperature: 0.7, top_p: 0.9 } },
};

export const task: TaskModule = {
  contract: 2,
  // Each stage is keyed on its part's module and what it imports (docs/tasks.md, Parts).
  parts: {
    prompts: "task-prompts.ts",
    parse: "task-parse.ts",
    score: "task-score.ts",
    statistics: "rows.ts",
    baselines: "task-baselines.ts",
  },
  configurations: CONFIGURATIONS,
  headline: "neutral-greedy",
  params: {
    prompts: {
      page_counts: {
        type: "object",
        description: "the page's counts ({$spec: /counts}): a real release is checked against them",
      },
      split: { type: "string", enum: ["test", "train"], description: "the pairs file read (test)" },
    },
  },
  buildRequests,
  parseReply,
  score,
  rescore,
  statistics: STATISTICS,
  baselines: BASELINES,
  privateRelease: {
    why:
      "its requests hold the private test notes, its replies and parses quote them (Evidence, reasoning) " +
      "and carry a per-request hash of the note, " +
      "and the fitted baseline's vocabulary holds train-note words",
    withhold: ["requests", "fit", "replies", "parsed"],
  },
};
