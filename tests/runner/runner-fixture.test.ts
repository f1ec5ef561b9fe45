// The runner on the fixture task tests/fixtures/sums (tests/fixtures/README.md), not on any real task: what
// is fresh, what each kind of edit reruns, --frozen, stale compiled code. A spec names the fixture by its
// folder path (docs/spec-files.md, `task`), so the runner never knows its name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Install, Project, SUMS_SPECS, expectCleanFailure } from "../support/rig.js";

const SPEC = "specs/sums.yaml";
const ALL_RAN = {
  download: "ran",
  prompts: "ran",
  model: "ran",
  parse: "ran",
  score: "ran",
  bootstrap: "ran",
};
const metrics = (p: Project, model = "medbench_calculator") =>
  JSON.parse(p.read(`results/fixture-sums/${model}/metrics.json`));

describe("the runner on the fixture task", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project(SUMS_SPECS);
  });
  afterAll(() => p.remove());

  it("builds every stage once; built again, nothing runs and the lock stays byte-identical", async () => {
    const first = await p.buildSpec(SPEC);
    expect(first.status).toEqual(ALL_RAN);
    expect(metrics(p).metrics.accuracy.value).toBe(1);
    const lock = p.read("medbench.lock");
    const results = p.snapshot(["results"]);
    const second = await p.buildSpec(SPEC);
    expect(new Set(Object.values(second.status))).toEqual(new Set(["fresh"]));
    expect(second.summary.stages.map((s) => s.key)).toEqual(first.summary.stages.map((s) => s.key));
    expect(p.read("medbench.lock")).toBe(lock);
    expect(p.snapshot(["results"])).toBe(results);
  });

  it("a score parameter change reruns just score and bootstrap; undone, everything is fresh", async () => {
    p.edit(SPEC, (t) => t.replace("tolerance: 0", "tolerance: 1"));
    const status = await p.run(["status", SPEC]);
    expect(status.stdout).toMatch(/stale\s+score[\s\S]*params changed: tolerance 0 -> 1/);
    expect(status.stdout).toMatch(/fresh\s+parse/);
    const changed = await p.buildSpec(SPEC);
    expect(changed.status).toEqual({
      ...ALL_RAN,
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
    });
    p.edit(SPEC, (t) => t.replace("tolerance: 1", "tolerance: 0"));
    expect(new Set(Object.values((await p.buildSpec(SPEC)).status))).toEqual(new Set(["fresh"]));
  });

  it("a prompt template edit reruns the requests and everything downstream, not the download", async () => {
    p.edit("specs/sums/prompts/user.txt", (t) => t.replace("number only", "sum only"));
    expect((await p.buildSpec(SPEC)).status).toEqual({ ...ALL_RAN, download: "fresh" });
    expect(p.read(`results/fixture-sums/medbench_calculator/replies.jsonl`)).toContain('"text":"5"');
  });

  it("another model is its own build, and the lock keeps both", async () => {
    const constant = ["--model", "medbench/constant"];
    const built = await p.buildSpec(SPEC, constant);
    expect(built.status).toMatchObject({ download: "fresh", prompts: "fresh", model: "ran" });
    expect(metrics(p, "medbench_constant").metrics.accuracy.value).toBe(0);
    // Both variable sets are in the lock: alternating changes nothing, and --frozen passes for both.
    const lock = p.read("medbench.lock");
    for (const args of [[], constant])
      expect((await p.run(["build", SPEC, "--frozen", "--quiet", ...args])).exitCode).toBe(0);
    expect(p.read("medbench.lock")).toBe(lock);
  });

  it("--frozen refuses a build that would change the lock, and changes nothing", async () => {
    const untouched = ["cache", "medbench.lock", "results"];
    p.edit(SPEC, (t) => t.replace("resamples: 200", "resamples: 199"));
    let before = p.snapshot(untouched);
    const moved = await p.run(["build", SPEC, "--frozen"]);
    expect(moved.exitCode).toBe(1);
    expect(moved.stderr).toContain("medbench.lock would change");
    expect(p.snapshot(untouched)).toBe(before);
    p.edit(SPEC, (t) => t.replace("resamples: 199", "resamples: 200"));
    // A variable set the lock holds no build of: refused before anything runs.
    before = p.snapshot(untouched);
    const unknown = await p.run(["build", SPEC, "--frozen", "--subset", "hard"]);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(
      /medbench\.lock records no build of specs\/sums\.yaml with .*subset=hard/,
    );
    expect(p.snapshot(untouched)).toBe(before);
  });
});

describe("a spec's task folder path", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project(SUMS_SPECS);
  });
  afterAll(() => p.remove());
  const naming = (task: string) => (t: string) =>
    t.replace("task: tests/fixtures/sums/task", `task: ${task}`);

  it("refuses a folder with no compiled task, at the spec's line, and changes nothing", async () => {
    const stderr = await p.refuses(naming("tests/fixtures/nothing-here"), { file: SPEC });
    expect(stderr).toMatch(/specs\/sums\.yaml:5:\d+.*unknown task `tests\/fixtures\/nothing-here`/);
    expect(stderr).toContain("or the path of a compiled task folder of the install");
  });

  it("checks the task's declared parameters before anything runs", async () => {
    const stderr = await p.refuses((t) => t.replace("tolerance: 0", "tolerance: lots"), { file: SPEC });
    expect(stderr).toMatch(/specs\/sums\.yaml:\d+:\d+: stages\.score\.params\.tolerance/);
  });

  it("refuses a path that climbs out of the install", async () => {
    const stderr = await p.refuses(naming("../../etc"), { file: SPEC });
    expect(stderr).toMatch(/specs\/sums\.yaml:5:\d+/);
  });
});

describe("the fixture task's code in the key", () => {
  let install: Install;
  let p: Project;
  beforeAll(() => {
    install = new Install();
    p = new Project(SUMS_SPECS);
  });
  afterAll(() => {
    install.remove();
    p.remove();
  });
  const scorer = "tests/fixtures/sums/task/scorer.ts";

  it("build and status refuse a task source newer than its compiled code, and change nothing", async () => {
    await p.buildSpec(SPEC, [], {}, install.bin);
    install.edit(scorer, (t) => t.replace(`"correct sums"`, `"sums that are right"`));
    const before = p.snapshot();
    for (const cmd of ["build", "status"]) {
      const r = await p.run([cmd, SPEC], {}, install.bin);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(`${scorer}: this source changed since dist/ was compiled`);
      expect(r.stderr).toContain("npm run build");
      expectCleanFailure(r.stderr);
    }
    expect(p.snapshot()).toBe(before);
  });

  it("once compiled, the edit reruns the stages that run the scorer, and the result shows it", async () => {
    await install.compile();
    const status = await p.run(["status", SPEC], {}, install.bin);
    expect(status.stdout).toMatch(/code changed: tests\/fixtures\/sums\/task\/scorer\.ts/);
    const built = await p.buildSpec(SPEC, [], {}, install.bin);
    // The scorer's module holds the score and the statistics: score and bootstrap run it (docs/tasks.md,
    // Parts).
    expect(built.status).toEqual({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
      score: "ran",
      bootstrap: "ran",
    });
    expect(metrics(p).metrics.accuracy.label).toBe("sums that are right");
    expect(new Set(Object.values((await p.buildSpec(SPEC, [], {}, install.bin)).status))).toEqual(
      new Set(["fresh"]),
    );
  });

  it("an edited task statistic reruns the bootstrap that evaluates it, scores the same", async () => {
    const before = metrics(p).metrics.answered_accuracy.value as number;
    install.edit(scorer, (t) => t.replace("correct / answered;", "correct / answered / 2;"));
    await install.compile();
    const built = await p.buildSpec(SPEC, [], {}, install.bin);
    expect(built.status.score).toBe("ran");
    expect(built.status.bootstrap).toBe("ran");
    expect(metrics(p).metrics.answered_accuracy.value).toBe(before / 2);
  });
});
