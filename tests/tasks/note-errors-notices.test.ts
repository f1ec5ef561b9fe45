// How many replies were read by a parser rule of medbench's own choice (where the task document is silent)
// is a notice of the run: shown after each build, under the run in `medbench check`, and in the report's
// data. A run none of whose replies was read so (a built-in baseline, which sends nothing) has no such
// notice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";
// @ts-expect-error: a plain ESM script, also run by hand
import { noteErrorsPolicy } from "../../scripts/fake-policies/note-errors.mjs";

const SPEC = "specs/note-errors.yaml";
// The roster's strong reference, served by the fake, so that the check shows the run.
const MODEL = "deepseek/deepseek-v4-pro-1.6t-a49b";
const RESULT = "results/syn-snuh-note-errors/deepseek_deepseek-v4-pro-1.6t-a49b/neutral-greedy";
const PRIOR = "results/syn-snuh-note-errors/medbench_prior/neutral-greedy";

describe("note-errors: replies read by our choice, shown", () => {
  let p: Project;
  let notice: string;
  let buildStderr: string;
  let fake: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    // Replies in the styles real models answer in (markdown, other separators, …): some read by our choice.
    fake = await startFake({ policy: noteErrorsPolicy({ quirks: true }) });
    p = new Project();
    p.write("routes.yaml", `routes:\n${fakeRoute("deepseek", fake.url)}`);
    const r = await p.run(["build", SPEC, "--model", MODEL, "--registry", "routes.yaml"]);
    expect([0, 1], r.stderr).toContain(r.exitCode); // the quirky policy fails a few notes for good
    buildStderr = r.stderr;
    const prior = await p.run(["build", SPEC]);
    expect(prior.exitCode, prior.stderr).toBe(0);
    // The expected line, from the counts the run recorded.
    const m = JSON.parse(p.read(`${RESULT}/metrics.json`)) as {
      tables: { counts: { parser_our_choice: number; api_errors: number }; notes: number };
    };
    const c = m.tables.counts;
    expect(c.parser_our_choice).toBeGreaterThan(0);
    notice = `${c.parser_our_choice} of ${m.tables.notes - c.api_errors} replies were read by a parser rule`;
  });
  afterAll(async () => {
    await fake.close();
    p.remove();
  });

  it("not for a built-in baseline, which sends nothing", () => {
    const m = JSON.parse(p.read(`${PRIOR}/metrics.json`)) as { notices?: string[] };
    expect((m.notices ?? []).some((n) => n.includes("read by a parser rule"))).toBe(false);
  });

  it("by build", () => {
    expect(buildStderr).toContain(notice);
  });

  it("by check, under the run, and in its JSON", async () => {
    const text = await p.run(["check", SPEC, "--registry", "routes.yaml"]);
    expect(text.stdout).toMatch(new RegExp(`  strong_reference [^\\n]*\\n[^\\n]*notice ${notice}`));
    const json = await p.run(["check", SPEC, "--json", "--registry", "routes.yaml"]);
    const report = JSON.parse(json.stdout) as { runs: { role: string; model: string; notices: string[] }[] };
    const strong = report.runs.find((r) => r.role === "strong_reference")!;
    expect(strong.notices.some((n) => n.startsWith(notice))).toBe(true);
    const prior = report.runs.find((r) => r.role === "prior")!;
    expect(prior.notices.some((n) => n.includes("read by a parser rule"))).toBe(false);
  });

  it("by the report, among the run's audit facts", async () => {
    const r = await p.run(["report", "-o", "report.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = /<script id="data" type="application\/json">(.*?)<\/script>/s.exec(p.read("report.html"));
    expect(data, "the page's data").not.toBeNull();
    const tasks = JSON.parse(data![1]!) as { slug: string; runs: { notices: string[] }[] }[];
    const runs = tasks.find((t) => t.slug === "syn-snuh-note-errors")!.runs as {
      model: string;
      notices: string[];
    }[];
    const run = runs.find((r) => r.model === MODEL)!;
    expect(run.notices.some((n) => n.startsWith(notice))).toBe(true);
  });
});
