// compare-voice-command on two runs of the sample, and what it must refuse.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, writeFileSync } from "node:fs";
import { Project } from "../support/rig.js";

/** `medbench stats paired` with these options, its JSON. */
async function statsPaired(p: Project, options: string[]) {
  const r = await p.run(["stats", "paired", ...options]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** A compare row's paired figures, in the order `stats paired` reports them (its b and c counts). */
const rowFigures = (r: Record<string, number>) => [r.diff_pp, r.lo, r.hi, r.mcnemar_p, r.b_count, r.c_count];
const statsFigures = (s: Record<string, number>) => [s.diff_pp, s.lo, s.hi, s.mcnemar_p, s.b, s.c];

describe("medbench compare-voice-command", () => {
  let p: Project;
  const prior = "results/kor-surgical-robot-voice-command/medbench_prior";
  const keyword = "results/kor-surgical-robot-voice-command/medbench_keyword-stop";
  beforeAll(async () => {
    p = new Project();
    await p.build();
    await p.build(["--model", "medbench/keyword-stop"]);
    await p.build(["--subset", "clean"]);
  });
  afterAll(() => p.remove());

  it("compares per subset, with the same numbers as `medbench stats paired` on the items", async () => {
    const r = await p.run(["compare-voice-command", keyword, prior, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rows.map((x: { subset: string }) => x.subset)).toEqual([
      "clean",
      "asr_generic",
      "asr_kor_or",
      "overheard",
    ]);
    expect(out).toMatchObject({ resamples: 2000, seed: 0, rng: "python" });
    // The same comparison through the generic CLI, from the item files.
    const items = (dir: string) =>
      p
        .read(`${dir}/items.jsonl`)
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((i) => i.meta.subset === "clean")
        .map((i) => JSON.stringify({ id: i.id, group: i.meta.group, ok: i.verdicts.exact }))
        .join("\n") + "\n";
    writeFileSync(p.path("a.jsonl"), items(keyword));
    writeFileSync(p.path("b.jsonl"), items(prior));
    const s = await statsPaired(p, [
      ...["--a", "a.jsonl", "--b", "b.jsonl"],
      ...["--value", "ok", "--id", "id", "--cluster", "group"],
    ]);
    const clean = out.rows[0];
    expect(rowFigures(clean)).toEqual(statsFigures(s));
    const text = await p.run(["compare-voice-command", keyword, prior]);
    expect(text.stdout).toMatch(/clean\s+[\d.]+\s+[\d.]+\s+-?[\d.]+/);
  });

  it("refuses partial runs, runs of other specs and runs over other items", async () => {
    const partial = await p.run(["compare-voice-command", keyword, `${prior}.partial`]);
    expect(partial.exitCode).toBe(2);
    expect(partial.stderr).toMatch(/is a partial run/);
    cpSync(p.path(prior), p.path("other-spec"), { recursive: true });
    p.edit("other-spec/metrics.json", (t) =>
      t.replace(/"spec_hash": "[0-9a-f]+"/, `"spec_hash": "${"0".repeat(64)}"`),
    );
    // A folder edited by hand is not what its build wrote: refused as such, before its
    // spec_hash or its items are believed.
    expect((await p.run(["compare-voice-command", keyword, "other-spec"])).stderr).toMatch(
      /other-spec is modified since build \(metrics\.json hashes to/,
    );
    cpSync(p.path(prior), p.path("other-items"), { recursive: true });
    p.edit("other-items/items.jsonl", (t) => t.split("\n").slice(1).join("\n"));
    expect((await p.run(["compare-voice-command", keyword, "other-items"])).stderr).toMatch(
      /other-items is modified since build \(items\.jsonl hashes to/,
    );
    expect((await p.run(["compare-voice-command", keyword, "nowhere"])).stderr).toMatch(
      /not a result directory/,
    );
  });
});

describe("medbench compare (generic)", () => {
  let p: Project;
  const prior = "results/kor-surgical-robot-voice-command/medbench_prior";
  const keyword = "results/kor-surgical-robot-voice-command/medbench_keyword-stop";
  const NE = "results/syn-snuh-note-errors";
  const ne = (m: string) => `${NE}/${m.replace("/", "_")}/neutral-greedy`;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    await p.build(["--model", "medbench/keyword-stop"]);
    for (const m of ["medbench/note-errors-conjunction-lr", "medbench/random"]) {
      const r = await p.run(["build", "specs/note-errors.yaml", "--model", m]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
  });
  afterAll(() => p.remove());

  it("gives what compare-voice-command gives, from the task's declaration", async () => {
    for (const json of [["--json"], []]) {
      const alias = await p.run(["compare-voice-command", keyword, prior, ...json]);
      const generic = await p.run(["compare", keyword, prior, ...json]);
      expect(generic.exitCode, generic.stderr).toBe(0);
      expect(generic.stdout).toBe(alias.stdout);
    }
  });

  it("compares a task with no declaration on its primary unit by unit, as stats paired does", async () => {
    const lr = ne("medbench/note-errors-conjunction-lr"),
      random = ne("medbench/random");
    const r = await p.run(["compare", lr, random, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ verdict: "bcr", resamples: 2000, seed: 0, rng: "numpy" });
    const s = await statsPaired(p, [
      ...["--a", `${lr}/units.jsonl`, "--b", `${random}/units.jsonl`],
      ...["--value", "value", "--id", "id", "--cluster", "cluster", "--rng", "numpy"],
    ]);
    const row = out.rows[0];
    expect(rowFigures(row)).toEqual(statsFigures(s));
    const bcr = (dir: string) => JSON.parse(p.read(`${dir}/metrics.json`)).metrics.bcr.value;
    expect([row.a, row.b]).toEqual([bcr(lr), bcr(random)]);
  });

  it("refuses runs of two tasks, and the alias refuses another task's runs", async () => {
    const mixed = await p.run(["compare", prior, ne("medbench/random")]);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toMatch(/is a run of kor-surgical-robot-voice-command, .* of syn-snuh-note-errors/);
    const alias = await p.run([
      "compare-voice-command",
      ne("medbench/random"),
      ne("medbench/note-errors-conjunction-lr"),
    ]);
    expect(alias.exitCode).toBe(2);
    expect(alias.stderr).toMatch(
      /is a run of syn-snuh-note-errors, not of kor-surgical-robot-voice-command/,
    );
  });
});
