// The prompts part: the test file's requests, after checking a real release against the task page.
import type { PromptsInput, TaskRequest } from "../task.js";
import { readPairs } from "./pairs.js";
import { noteRequests } from "./prompts.js";
import { PAGE_EXPOSED_TEST_PAIRS, releaseProblems, type PageCounts } from "./release-check.js";
import { TEST, TRAIN } from "./files.js";

/** The prompts stage's parameters this task reads (declared in index.ts). */
interface PromptParams {
  page_counts?: PageCounts;
  split?: "test" | "train";
}

export function buildRequests({
  release,
  templates,
  params,
  configuration,
  notice,
}: PromptsInput): TaskRequest[] {
  const status = (JSON.parse(templates.prompt_status ?? "{}") as { status?: string }).status;
  if (status !== "original")
    notice?.(
      "note-errors prompts are medbench's RECONSTRUCTION of MEDERRBENCH_EN_PROMPTS, not the authors' " +
        "text (specs/note-errors/prompts/README.md)",
    );
  const settings = (params ?? {}) as PromptParams;
  const split = settings.split === "train" ? TRAIN : TEST;
  const pairs = readPairs(release.text(split), split);
  // The real release is checked against the page before any request exists (the sample is not the page's).
  if (!pairs.some((pair) => pair.synthetic)) {
    const page = settings.page_counts;
    if (!page?.test || !page.train)
      throw new Error(
        "the prompts stage has no page_counts to check the real release against: " +
          "give it `page_counts: { $spec: /counts }` (specs/note-errors.yaml)",
      );
    const problems = [
      ...releaseProblems(readPairs(release.text(TEST), TEST), TEST, page.test, PAGE_EXPOSED_TEST_PAIRS),
      ...releaseProblems(readPairs(release.text(TRAIN), TRAIN), TRAIN, page.train, null),
    ];
    if (problems.length)
      throw new Error(`the release is not the one the task page describes:\n  ${problems.join("\n  ")}`);
  }
  if (pairs.some((pair) => pair.synthetic))
    notice?.("built from the SYNTHETIC sample (specs/note-errors/sample), not SYN-SNUH data");
  const prompt = configuration?.prompt ?? "neutral";
  const system = templates[`${prompt}_system`],
    user = templates[`${prompt}_user`];
  if (system === undefined || user === undefined)
    throw new Error(`the prompts stage needs the inputs ${prompt}_system and ${prompt}_user`);
  return noteRequests(pairs, { system, user }).map((request) => ({
    ...request,
    unit: (request.meta as { pair_id: string }).pair_id,
    meta: { ...request.meta, subset: split === TRAIN ? "train" : "test" },
  }));
}
