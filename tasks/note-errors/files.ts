// The release files this task reads, and what a request carries about its note (shared by its parts).
import type { TaskRequest } from "../task.js";
import type { ScoredRequest } from "./scorer.js";

export const TEST = "pairs_test.jsonl";
export const TRAIN = "pairs_train.jsonl";

export const metaOf = (request: TaskRequest) => request.meta as unknown as ScoredRequest["meta"];
