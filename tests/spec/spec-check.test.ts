// A spec is checked against what its stage kinds and task declare before anything runs: wrong wiring and
// wrong parameter values are diagnostics at file:line:column, exit 2, and the cache, the lock and earlier
// results stay as they were.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";

const SPEC = "specs/voice-command.yaml";

describe("the spec checked against the declarations", () => {
  let p: Project;
  let pristine: string;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    pristine = p.read(SPEC);
  });
  afterAll(() => p.remove());

  const refused = (edit: (t: string) => string) => p.refuses(edit);
  const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

  it("an input renamed: bootstrap's `score` as `scored`", async () => {
    const err = await refused((t) =>
      t.replace("      score: { stage: score }", "      scored: { stage: score }"),
    );
    const line = lineOf(pristine, "      score: { stage: score }");
    expect(err).toContain(
      `voice-command.yaml:${line}:7: stages.bootstrap.inputs.scored: ` +
        "a bootstrap stage has no input `scored`",
    );
    expect(err).toMatch(/its inputs are: score, model, judge, prompts, release/);
    expect(err).toMatch(/stages\.bootstrap\.inputs: stage bootstrap \(bootstrap\) needs the input `score`/);
    expect(err).toMatch(/fix: add score: \{ stage: NAME \} \(here: score\)/);
  });

  it("an input wired to a stage of the wrong kind", async () => {
    const err = await refused((t) =>
      t.replace("      replies: { stage: model }", "      replies: { stage: prompts }"),
    );
    expect(err).toMatch(
      "stages.parse.inputs.replies.stage: input `replies` of stage parse " +
        "needs output `replies` (replies); stage prompts is a prompts stage",
    );
    expect(err).toMatch(/fix: name a stage that produces it \(here: model\)/);
  });

  it("a file where a stage is read, and a stage where a file is read", async () => {
    const err = await refused((t) =>
      t.replace(
        "      parsed: { stage: parse }",
        "      parsed: { file: specs/voice-command/prompts/user.txt }",
      ),
    );
    expect(err).toMatch(/stages\.score\.inputs\.parsed: input `parsed` reads a stage/);
  });

  it("a results file naming an output that does not exist", async () => {
    const err = await refused((t) => t.replace("items.jsonl: score/items", "items.jsonl: score/item"));
    expect(err).toMatch(/results\.files\.items\.jsonl: stage score \(score\) has no output `item`/);
    expect(err).toMatch(/fix: use one of: score\/items, score\/metrics, score\/tables/);
  });

  it.each([
    [
      "resamples: 1000",
      "resamples: lots",
      /bootstrap\.params\.resamples: must be an integer, not "lots"/,
      /write an integer ≥ 1/,
    ],
    ["level: 0.95", "level: 7", /bootstrap\.params\.level: 7 is out of range/, /use a value > 0 and < 1/],
    [
      "rng: numpy",
      "rng: mersenne",
      /bootstrap\.params\.rng: "mersenne" is not allowed/,
      /use one of: "numpy", "python"/,
    ],
    [
      "slot_compare: casefold",
      "slot_compare: fuzzy",
      /score\.params\.slot_compare: "fuzzy" is not allowed/,
      /use one of: "casefold", "exact"/,
    ],
    [
      "      temperature: { $spec: /request/temperature }",
      "      temperature: hot",
      /model\.params\.temperature: must be a number, not "hot"/,
      /write a number ≥ 0 and ≤ 2/,
    ],
    [
      "paired: { resamples: 2000, seed: 0, rng: python }",
      "paired: { resamples: 2000, seed: -1, rng: python }",
      /bootstrap\.params\.paired\.seed: -1 is out of range/,
      /use a value ≥ 0/,
    ],
    ['thinking: "off"', "thinking: maybe", /model\.params\.thinking: "maybe" is not allowed/, /"off", "on"/],
  ])("%s -> %s", async (from, to, message, fix) => {
    const err = await refused((t) => t.replace(from, to));
    const line = lineOf(pristine, from);
    expect(err).toMatch(new RegExp(`voice-command\\.yaml:${line}:\\d+: `));
    expect(err).toMatch(message);
    expect(err).toMatch(fix);
  });

  it("a parameter from a build variable says which variable", async () => {
    const err = await refused((t) => t.replace("  limit: null ", "  limit: lots "));
    expect(err).toMatch(
      /prompts\.params\.limit: must be an integer or null, not "lots" \(the value of variable `limit`\)/,
    );
  });

  it("a subset the task does not declare, before anything runs", async () => {
    const err = await p.refuses(null, { args: ["build", SPEC, "--subset", "clean,overhead"] });
    expect(err).toMatch(
      /prompts\.params\.subset: unknown subset "overhead" \(the value of variable `subset`\)/,
    );
    expect(err).toMatch(/fix: use a comma list of: clean, asr_generic, asr_kor_or, overheard/);
  });

  it("a required parameter missing", async () => {
    const err = await refused((t) => t.replace("      rng: numpy\n", ""));
    expect(err).toMatch(
      /stages\.bootstrap\.params: stage bootstrap \(bootstrap\) needs the parameter `rng`/,
    );
  });
});
