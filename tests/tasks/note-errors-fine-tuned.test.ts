// spec.decisions fine_tuned_models: "any model fine-tuned on [the train split] is tagged and kept off the
// headline". A build says so with the run field `trained_on` (--var trained_on=train); metrics.json records
// it, the check tags the run `fine-tuned` and lets it stand for no roster entry, and the report lists it
// unranked below the headline.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";

const SPEC = "specs/note-errors.yaml";
const RESULTS = "results/syn-snuh-note-errors";

interface Row {
  model: string;
  tags: string[];
  headline: boolean;
}
interface Check {
  missing: { model: string; reason: string }[];
}

describe("a model fine-tuned on the task's train split", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    for (const model of ["medbench/prior", "medbench/constant-yes"]) {
      const r = await p.run(["build", SPEC, "--model", model, "--quiet"]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    // Built as a model trained on the train split (its name is its own; the run field says what it is).
    const r = await p.run([
      "build",
      SPEC,
      "--model",
      "medbench/random",
      "--var",
      "trained_on=train",
      "--quiet",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(() => p.remove());

  it("is recorded in metrics.json", () => {
    const metrics = JSON.parse(p.read(`${RESULTS}/medbench_random/neutral-greedy/metrics.json`));
    expect(metrics.trained_on).toBe("train");
    const prior = JSON.parse(p.read(`${RESULTS}/medbench_prior/neutral-greedy/metrics.json`));
    expect(prior).not.toHaveProperty("trained_on");
  });

  it("is tagged and ranked below the headline, unranked, in the report", async () => {
    const r = await p.run(["report", SPEC, "-o", "r.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = JSON.parse(
      /<script id="data" type="application\/json">(.*?)<\/script>/s.exec(p.read("r.html"))![1]!,
    ) as { leaderboard: Row[] }[];
    const board = data[0]!.leaderboard;
    expect(board.map((row) => row.model).at(-1)).toBe("medbench/random");
    const tuned = board.find((row) => row.model === "medbench/random")!;
    expect(tuned.tags).toContain("fine-tuned");
    expect(tuned.headline).toBe(false);
    expect(board.filter((row) => row.model !== "medbench/random").every((row) => row.headline)).toBe(true);
  });

  it("stands for no roster entry in the check", async () => {
    const r = await p.run(["check", SPEC, "--json"]);
    const check = JSON.parse(r.stdout) as Check;
    const random = check.missing.find((entry) => entry.model === "medbench/random")!;
    expect(random.reason).toMatch(/fine-tuned on this task's train split, which is kept off the headline/);
  });

  it("is refused with the place and a fix when the value is not a split's name", async () => {
    const r = await p.run(["build", SPEC, "--var", "trained_on=tr@in"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/specs\/note-errors\.yaml:\d+:\d+: stages\.bootstrap\.params\.trained_on/);
    expect(r.stderr).toMatch(/fix: /);
  });
});
