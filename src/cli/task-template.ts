// What `medbench new-task NAME` writes: a task of the user's own repository that builds offline on a
// two-item sample with its built-in baseline (route `medbench`, no key, no network). Shaped like the runner
// tests' fixture task (tests/fixtures/sums), which docs/tasks.md walks through. The files' text is in
// src/cli/templates/task/, read at run time from the install root.
import { filledTemplate } from "./template-files.js";

/** The sample release: two items. */
export const SAMPLE_ITEMS =
  [
    { id: "q1", question: "What is 2 + 3?", answer: "5" },
    { id: "q2", question: "What is 7 - 4?", answer: "3" },
  ]
    .map((record) => JSON.stringify(record))
    .join("\n") + "\n";

export const USER_PROMPT = "Answer with the number only.\n\n{question}\n";

const TASK_FILES = ["index.ts", "prompts.ts", "parser.ts", "scorer.ts", "baselines.ts"];

/** The task's sources, by file name under tasks/<name>/. */
export function taskSources(name: string): Record<string, string> {
  return Object.fromEntries(
    TASK_FILES.map((file) => [file, filledTemplate(`task/${file}.template`, { name })]),
  );
}

/** The spec: the published part (`spec:`) and the stage graph, with the sample pinned by its sha256. */
export function taskSpec(name: string, sampleSha256: string): string {
  return filledTemplate("task/spec.yaml.template", { name, sampleSha256 });
}
