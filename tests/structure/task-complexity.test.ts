// Every part of a task that runs per item grows linearly with the run, and so does reading a release through
// the runner: prompts, parser, judge prompts, built-in baselines and their fit, the metric statistics the
// bootstrap evaluates, and the bootstrap's intervals. No clock: each part runs on a synthetic release of n
// items and of 8n (every item distinct, in the shape of the bundled sample), and the elements it walks are
// counted (tests/support/walked.ts); 8 times the items must cost under 10 times the walking. The scorers are
// checked the same way in tests/structure/scorer-complexity.test.ts. SHOW_WALKED=1 prints the counts.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";
import { syntheticReply as reply, walked, type Counted } from "../support/walked.js";
import type { ReleaseFiles, TaskModule, TaskRequest } from "../../tasks/task.js";
import type { Json } from "../../src/util/json.js";
import { Cache } from "../../src/runner/store/cache.js";
import { stageContext, type BuildScope } from "../../src/runner/execution/executor.js";
import { releaseFiles } from "../../stages/release.js";
import * as intervals from "../../src/stats/intervals.js";
import { intervalsOf } from "../../stages/bootstrap.js";
import { NumpyGenerator } from "../../src/stats/pcg64.js";
import { PyRandom } from "../../src/stats/mt19937.js";
import { task as voiceCommand } from "../../tasks/voice-command/index.js";
import { task as mtsamples } from "../../tasks/mtsamples/index.js";
import { task as noteErrors } from "../../tasks/note-errors/index.js";
import { extract } from "../../tasks/mtsamples/instances.js";

const work = mkdtempSync(join(tmpdir(), "medbench-complexity-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const read = (path: string) => readFileSync(resolve(REPO, path), "utf8");
const lines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let stores = 0;
/** Release files as a prompts stage reads them: objects of a real cache, through the runner's input view. */
function runnerRelease(files: Record<string, string>): ReleaseFiles {
  const cache = new Cache(join(work, `cache-${stores++}`));
  const hashes: Record<string, string> = {};
  for (const [path, text] of Object.entries(files)) hashes[path] = cache.put(text);
  const scope = {
    rt: { spec: { path: "specs/x.yaml" }, build: {}, task: { name: "x", module: {} } },
    opts: {
      project: { root: work, cacheDir: join(work, "cache") },
      refresh: [],
      env: {},
      registryFiles: [],
      trustChanged: false,
    },
    cache,
    upstream: new Map([["download", hashes]]),
    sources: new Map(),
    previous: undefined,
    newPins: {},
    emit: () => {},
    memo: null,
  } as unknown as BuildScope;
  const decl = { name: "prompts", kind: "prompts", inputs: { release: { stage: "download" } }, params: {} };
  return releaseFiles(stageContext(decl, scope, []).inputs.release);
}

const baseline = (task: TaskModule, name: string) => task.baselines[name]!;

/** A part's run on n items: the input is made first (not counted), then what it returns is counted. */
type Case = [name: string, n: number, prepare: (n: number) => () => unknown, more?: Counted[]];

/** A task's prompts, built from a release of n items (made before counting). */
const promptsCase = (
  name: string,
  size: number,
  release: (n: number) => ReleaseFiles,
  requests: (release: ReleaseFiles) => TaskRequest[],
): Case => [
  name,
  size,
  (n) => {
    const files = release(n);
    return () => requests(files);
  },
];

/** Each named built-in baseline replying to the requests of a release of n items. */
const baselineCases = (
  task: TaskModule,
  names: string[],
  size: number,
  release: (n: number) => ReleaseFiles,
  requests: (release: ReleaseFiles) => TaskRequest[],
): Case[] =>
  names.map((name) => [
    name,
    size,
    (n) => {
      const files = release(n);
      const asked = requests(files);
      return () => baseline(task, name).reply({ release: files, requests: asked, params: {}, seed: 0 });
    },
  ]);

// ---- voice-command: the bundled sample's rows repeated, every utterance, id and group distinct -----------
const VC = "specs/voice-command/sample";
const VC_FILES = [
  "benchmark/commands_v0.1.jsonl",
  "benchmark/commands_v0.1_asr_generic.jsonl",
  "benchmark/commands_v0.1_asr_kor_or_stt.jsonl",
  "benchmark/kor_overheard_v0.1.jsonl",
  "train/train_v0.2.jsonl",
];
function voiceRelease(n: number): ReleaseFiles {
  const files: Record<string, string> = {
    "benchmark/scenes_v0.1.json": read(`${VC}/benchmark/scenes_v0.1.json`),
    "benchmark/rules_v0.1.txt": read(`${VC}/benchmark/rules_v0.1.txt`),
  };
  for (const [k, f] of VC_FILES.entries()) {
    const rows = lines(read(`${VC}/${f}`));
    const out: string[] = [];
    for (let i = 0; out.length < n; i++) {
      const r = rows[i % rows.length]!;
      const c = Math.floor(i / rows.length);
      out.push(
        JSON.stringify({
          ...r,
          id: `${r.id}-c${c}`,
          group: `${r.group}-c${c}`,
          utterance: `${r.utterance} (${c}.${k})`,
        }),
      );
    }
    files[f] = out.join("\n") + "\n";
  }
  return runnerRelease(files);
}
const vcTemplates = {
  system: read("specs/voice-command/prompts/system.txt"),
  user: read("specs/voice-command/prompts/user.txt"),
  output_format: read("specs/voice-command/prompts/output_format.txt"),
  schema: read("specs/voice-command/robot_command.schema.json"),
};
const vcRequests = (release: ReleaseFiles) =>
  voiceCommand.buildRequests({ release, templates: vcTemplates, params: {} }) as TaskRequest[];

const voiceCases: Case[] = [
  promptsCase("prompts", 100, voiceRelease, vcRequests),
  [
    "parser",
    100,
    (n) => {
      const requests = vcRequests(voiceRelease(n));
      const texts = baseline(voiceCommand, "medbench/keyword-stop").reply({
        release: voiceRelease(1),
        requests,
        params: {},
        seed: 0,
      });
      const replies = requests.map((r, i) => reply(r.id, i % 5 ? texts[i]! : `Sure: ${texts[i]} {not json`));
      // The schema's validator is compiled on the first reply, once per process: compiled before counting.
      voiceCommand.parseReply({ reply: replies[0]!, request: requests[0]!, params: {} });
      return () =>
        requests.forEach((request, i) =>
          voiceCommand.parseReply({ reply: replies[i]!, request, params: {} }),
        );
    },
  ],
  ...baselineCases(voiceCommand, ["medbench/prior", "medbench/keyword-stop"], 100, voiceRelease, vcRequests),
];

// ---- note-errors: the sample's pairs repeated, a last line naming the copy in both notes -----------------
const NE = "specs/note-errors/sample";
function pairsText(file: string, pairs: number): string {
  const rows = lines(read(`${NE}/${file}`));
  const out: string[] = [];
  for (let i = 0; i < pairs; i++) {
    const r = rows[i % rows.length]!;
    const mark = `\nMemo: copy ${Math.floor(i / rows.length)} of ${file}`;
    out.push(
      JSON.stringify({
        ...r,
        pair_id: `${r.pair_id}-c${Math.floor(i / rows.length)}`,
        error_note: `${r.error_note}${mark}`,
        clean_note: `${r.clean_note}${mark}`,
      }),
    );
  }
  return out.join("\n") + "\n";
}
/** A release of n notes (n / 2 pairs) in the test file and as many in the train file. */
const noteRelease = (n: number) =>
  runnerRelease({
    "pairs_test.jsonl": pairsText("pairs_test.jsonl", n / 2),
    "pairs_train.jsonl": pairsText("pairs_train.jsonl", n / 2),
  });
const nePrompts = Object.fromEntries(
  readdirSync(resolve(REPO, "specs/note-errors/prompts"))
    .filter((f) => /\.(system|user)\.txt$|^prompts\.json$/.test(f))
    .map((f) => [
      f === "prompts.json" ? "prompt_status" : f.replace(/\.txt$/, "").replace(".", "_"),
      read(`specs/note-errors/prompts/${f}`),
    ]),
);
const neRequests = (release: ReleaseFiles) =>
  noteErrors.buildRequests({ release, templates: nePrompts, params: {} }) as TaskRequest[];
const LR = "medbench/note-errors-conjunction-lr";
const small = noteRelease(128);
const fitted = baseline(noteErrors, LR).fit!({ release: small, params: {}, seed: 0 });

const noteCases: Case[] = [
  promptsCase("prompts", 128, noteRelease, neRequests),
  [
    "parser",
    128,
    (n) => {
      const requests = neRequests(noteRelease(n));
      const replies = requests.map((r, i) =>
        reply(
          r.id,
          [
            `Evidence: line ${i}\nAnalysis: a\nConfidence: 3\nError: ${i % 3 ? "Yes" : "No"}`,
            "Error: maybe",
            `<think>x</think>\nError: No`,
          ][i % 3]!,
        ),
      );
      return () =>
        requests.forEach((request, i) => noteErrors.parseReply({ reply: replies[i]!, request, params: {} }));
    },
  ],
  ...baselineCases(
    noteErrors,
    ["medbench/prior", "medbench/constant-yes", "medbench/random"],
    128,
    noteRelease,
    neRequests,
  ),
  [
    `${LR} (replies, a fitted model)`,
    128,
    (n) => {
      const release = noteRelease(n);
      const requests = neRequests(release);
      return () => baseline(noteErrors, LR).reply({ release, requests, params: {}, seed: 0, fitted });
    },
  ],
  [
    `${LR} (fit on the train pairs)`,
    128,
    (n) => {
      const release = noteRelease(n);
      return () => baseline(noteErrors, LR).fit!({ release, params: {}, seed: 0 });
    },
  ],
  [
    "metric statistics (every reported metric on the pair rows, as each resample evaluates them)",
    128,
    (n) => {
      const requests = neRequests(noteRelease(n));
      const texts = baseline(noteErrors, "medbench/random").reply({
        release: noteRelease(n),
        requests,
        params: {},
        seed: 0,
      });
      const replies = requests.map((r, i) => reply(r.id, texts[i]!));
      const parsed = replies.map((r, i) =>
        noteErrors.parseReply({ reply: r, request: requests[i]!, params: {} }),
      );
      const rows = noteErrors.score({ requests, parsed, replies, params: {} }).metrics[0]!.rows;
      const statistics = Object.values(noteErrors.statistics!);
      return () => statistics.forEach((s) => s(rows));
    },
  ],
];

// ---- mtsamples: the notes HELM keeps, each repeated as a new file with a first line naming its copy ------
const MT = resolve(REPO, "tests/data/mtsamples_processed");
const mtNotes = readdirSync(MT)
  .filter((f) => f.endsWith(".txt"))
  .sort()
  .map((f) => [f, readFileSync(join(MT, f), "utf8")] as const)
  .filter(([f, t]) => extract(f, t, "helm").ok);
function mtRelease(n: number): ReleaseFiles {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    const [f, t] = mtNotes[i % mtNotes.length]!;
    const c = Math.floor(i / mtNotes.length);
    files[`${f.replace(/\.txt$/, "")} - copy ${c}.txt`] = `Copy ${c}.\n${t}`;
  }
  return runnerRelease(files);
}
const mtTemplates = {
  system: read("specs/mtsamples/prompts/system.txt"),
  judge: read("specs/mtsamples/prompts/judge.txt"),
};
const mtRequests = (release: ReleaseFiles) =>
  mtsamples.buildRequests({ release, templates: mtTemplates, params: { variant: "helm" } }) as TaskRequest[];
const mtPlans = (requests: TaskRequest[]) =>
  baseline(mtsamples, "medbench/impression").reply({ release: mtRelease(1), requests, params: {}, seed: 0 });

const mtCases: Case[] = [
  promptsCase("prompts (the notes read file by file through the runner)", 150, mtRelease, mtRequests),
  [
    "parser",
    150,
    (n) => {
      const requests = mtRequests(mtRelease(n));
      const replies = mtPlans(requests).map((t, i) => reply(requests[i]!.id, `<think>x</think>${t}`));
      return () =>
        requests.forEach((request, i) => mtsamples.parseReply({ reply: replies[i]!, request, params: {} }));
    },
  ],
  [
    "judge prompts",
    150,
    (n) => {
      const requests = mtRequests(mtRelease(n));
      const plans = mtPlans(requests);
      const parsed = plans.map((p) => ({ ok: true, value: p as Json }));
      return () => mtsamples.judgeRequests!({ requests, parsed, templates: mtTemplates, params: {} });
    },
  ],
  [
    "medbench/impression",
    150,
    (n) => {
      const requests = mtRequests(mtRelease(n));
      return () => mtPlans(requests);
    },
  ],
  [
    "medbench/overlap-judge",
    150,
    (n) => {
      const requests = mtRequests(mtRelease(n));
      const parsed = mtPlans(requests).map((p) => ({ ok: true, value: p as Json }));
      const judge = mtsamples.judgeRequests!({ requests, parsed, templates: mtTemplates, params: {} });
      return () =>
        baseline(mtsamples, "medbench/overlap-judge").reply({
          release: mtRelease(1),
          requests: judge,
          params: {},
          seed: 0,
        });
    },
  ],
];

// ---- the bootstrap stage's intervals (the runner's, every task's): clusters of two rows each -------------
const rowsOf = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `r${i}`, value: i % 3 ? 1 : 0, cluster: `g${i >> 1}` }));
const bootstrapCases: Case[] = [
  [
    "mean metric with clusters (bootstrapCi)",
    300,
    (n) => {
      const rows = rowsOf(n);
      return () => intervals.bootstrapCi(rows, { resamples: 20, seed: 0, rng: "numpy", level: 0.95 });
    },
  ],
  [
    "task statistic with clusters (statisticCi)",
    300,
    (n) => {
      const rows = rowsOf(n);
      const share = (rs: readonly { value: number }[]) => rs.filter((r) => r.value === 1).length / rs.length;
      return () =>
        intervals.statisticCi(rows, share, { resamples: 20, seed: 0, rng: "python", level: 0.95 });
    },
  ],
];

// The random draws themselves: each index drawn counts.
const DRAWS: Counted[] = [
  [NumpyGenerator.prototype, "integers", (args) => Number(args[2] ?? 1)],
  [PyRandom.prototype, "choicesIndex", (args) => Number(args[1])],
];
/** A scored block of six metrics over the same n units (pairs of two rows), four means and two
 *  statistics. */
function scoredBlock(n: number) {
  const rows = Array.from({ length: 2 * n }, (_, i) => ({
    id: `r${i}`,
    value: (i * 7) % 3 ? 1 : 0,
    cluster: `u${i >> 1}`,
    fields: { flagged: i % 2 },
  }));
  const metric = (name: string, statistic?: string) => ({
    name,
    label: name,
    rows,
    ...(statistic ? { statistic } : {}),
  });
  return {
    metrics: [
      metric("a"),
      metric("b"),
      metric("c"),
      metric("d"),
      metric("e", "flagged"),
      metric("f", "flagged"),
    ],
    paired: [],
  };
}
const flagged = (rows: readonly { fields?: Record<string, number> }[]) =>
  rows.filter((r) => r.fields?.flagged === 1).length / rows.length;
bootstrapCases.push([
  // 2,000 resamples of 600 units are kept (src/stats/intervals.ts, DRAWS_KEPT), of 4,800 are not: drawn
  // again for every metric they made the stage's time per item jump with the run.
  "a run's metrics over the same units: the resamples drawn once for all of them, kept or not",
  600,
  (n) => {
    const scored = scoredBlock(n);
    const p = { resamples: 2000, seed: 11, rng: "numpy" as const, level: 0.95 };
    return () => intervalsOf(scored, { flagged }, p, intervals);
  },
  DRAWS,
]);

const tasks: [string, Case[]][] = [
  ["voice-command", voiceCases],
  ["note-errors", noteCases],
  ["mtsamples", mtCases],
  ["the bootstrap stage", bootstrapCases],
];
for (const [task, cases] of tasks)
  describe(`${task}: 8 times the items, at most 10 times the elements walked`, () => {
    for (const [name, n, prepare, more] of cases)
      it(name, () => {
        const small = prepare(n);
        const large = prepare(8 * n);
        const ws = walked(() => void small(), more);
        const wl = walked(() => void large(), more);
        expect(ws).toBeGreaterThanOrEqual(n); // the counter sees the part's work
        if (process.env.SHOW_WALKED) console.log(task, name, ws, wl, (wl / ws).toFixed(2));
        expect(wl / ws).toBeLessThan(10);
      });
  });
