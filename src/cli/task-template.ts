// What `medbench new-task NAME` writes: a task of the user's own repository that builds offline on a
// two-item sample with its built-in baseline (route `medbench`, no key, no network). Shaped like the runner
// tests' fixture task (tests/fixtures/sums), which docs/tasks.md walks through.

/** The sample release: two items. */
export const SAMPLE_ITEMS =
  [
    { id: "q1", question: "What is 2 + 3?", answer: "5" },
    { id: "q2", question: "What is 7 - 4?", answer: "3" },
  ]
    .map((record) => JSON.stringify(record))
    .join("\n") + "\n";

export const USER_PROMPT = "Answer with the number only.\n\n{question}\n";

/** The task's sources, by file name under tasks/<name>/. */
export function taskSources(name: string): Record<string, string> {
  return {
    "index.ts": `// ${name}: a task of this repository, compiled by medbench
// (npx medbench build specs/${name}.yaml).
// The contract (what each function receives and returns): node_modules/medbench/src/contract/task.ts.
import type { TaskModule } from "medbench/tasks/task.js";
import { buildRequests } from "./prompts.js";
import { parseReply } from "./parser.js";
import { score } from "./scorer.js";
import { reference } from "./baselines.js";

export const task: TaskModule = {
  contract: 2,
  // Which module holds each function: a stage is keyed on that module and what it imports, so editing the
  // parser reruns parse and what follows, not the prompts or the model (docs/tasks.md, "Parts"). Each
  // function must be the very export of its module (a wrapper written here would be in no key).
  parts: { prompts: "prompts.ts", parse: "parser.ts", score: "scorer.ts", baselines: "baselines.ts" },
  buildRequests,
  parseReply,
  score,
  baselines: {
    // --model medbench/reference: answers every item from the release's answer (a pipeline check).
    "medbench/reference": { reply: reference },
  },
};
`,
    "prompts.ts": `// One request per line of items.jsonl: the user template with {question} filled in.
import type { PromptsInput, TaskRequest } from "medbench/tasks/task.js";

interface Item {
  id: string;
  question: string;
  answer: string;
}

export function buildRequests({ release, templates }: PromptsInput): TaskRequest[] {
  const items = release
    .text("items.jsonl")
    .split("\\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Item);
  const user = templates.user ?? "{question}";
  return items.map((it) => ({
    id: it.id,
    messages: [{ role: "user", content: user.replace("{question}", it.question) }],
    meta: { gold: it.answer },
  }));
}
`,
    "parser.ts": `// The reply's first number; none is a parse failure.
import type { ParseInput, ParsedReply } from "medbench/tasks/task.js";

export function parseReply({ reply }: ParseInput): ParsedReply {
  const m = /-?\\d+(\\.\\d+)?/.exec(reply.text);
  return m ? { ok: true, value: m[0] } : { ok: false, value: null, error: "no number in the reply" };
}
`,
    "scorer.ts": `// An item is correct when its parsed number equals the release's answer;
// accuracy is the mean.
import type { MetricRow, ScoreInput, ScoreOutput } from "medbench/tasks/task.js";

export function score({ requests, parsed }: ScoreInput): ScoreOutput {
  const items = requests.map((r, i) => {
    const p = parsed[i];
    const answer = p?.ok ? String(p.value) : null;
    return { id: r.id, meta: r.meta, parsed: answer, verdicts: { correct: answer === r.meta.gold } };
  });
  const rows: MetricRow[] = items.map((it) => ({
    id: it.id,
    value: it.verdicts.correct ? 1 : 0,
    cluster: it.id,
  }));
  return {
    items,
    metrics: [{ name: "accuracy", label: "correct answers", rows, primary: true, unit: "proportion" }],
    paired: [],
    tables: { items: items.length },
  };
}
`,
    "baselines.ts": `// Built-in models (route \`medbench\`): answered here, with no request sent.
import type { BaselineInput } from "medbench/tasks/task.js";

/** The release's own answer to every item: a check of the pipeline, not of any model. */
export function reference({ requests }: BaselineInput): string[] {
  return requests.map((r) => \`The answer is \${String(r.meta.gold)}.\`);
}
`,
  };
}

/** The spec: the published part (\`spec:\`) and the stage graph, with the sample pinned by its sha256. */
export function taskSpec(name: string, sampleSha256: string): string {
  return `# ${name}: a task of this repository. Build: npx medbench build specs/${name}.yaml
# Format of this file: node_modules/medbench/docs/spec-files.md.
slug: ${name}
version: 0
task: ${name}   # tasks/${name}/index.ts, beside this folder

variables:
  model: medbench/reference   # ROUTE/MODEL; medbench/* are the task's built-in baselines (no network)
  subset: null
  limit: null

stages:
  download:
    kind: download
    params:
      source: local/${name}
      files:
        items.jsonl: null   # the real release (--data-dir DIR): trusted on first use, then pinned
      sample:
        dir: specs/${name}/sample
        label: sample/${name}-v1
        files:
          items.jsonl: ${sampleSha256}
  prompts:
    kind: prompts
    inputs:
      release: { stage: download }
      user: { file: specs/${name}/prompts/user.txt }
    params:
      subset: { $var: subset }
      limit: { $var: limit }
  model:
    kind: model
    inputs:
      requests: { stage: prompts }
      release: { stage: download }
    params:
      model: { $var: model }
      max_tokens: { $spec: /request/max_tokens }
      temperature: { $spec: /request/temperature }
  parse:
    kind: parse
    inputs:
      requests: { stage: prompts }
      replies: { stage: model }
  score:
    kind: score
    inputs:
      requests: { stage: prompts }
      parsed: { stage: parse }
  bootstrap:
    kind: bootstrap
    inputs:
      score: { stage: score }
      model: { stage: model }
      prompts: { stage: prompts }
      release: { stage: download }
    params:
      primary: { $spec: /primary_metric }
      level: 0.95
      resamples: 1000
      seed: 0
      rng: numpy

results:
  dir: results/{slug}/{model}
  files:
    metrics.json: bootstrap/metrics
    items.jsonl: score/items
    units.jsonl: bootstrap/units
    replies.jsonl: model/replies

spec:
  slug: ${name}
  title: ${name}
  primary_metric: accuracy
  request:
    max_tokens: 64
    temperature: 0
  metrics:
    accuracy: the reply's first number equals the item's answer
`;
}
