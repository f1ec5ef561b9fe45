// How many replies were read by a parser rule of medbench's own choice (where the task document is silent) is
// a notice of the run: shown after each build, under the run in `medbench check`, and in the report's data.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project } from "./rig.js";

const SPEC = "specs/note-errors.yaml";
const RESULT = "results/syn-snuh-note-errors/medbench_prior/neutral-greedy";

describe("note-errors: replies read by our choice, shown", () => {
  let p: Project;
  let notice: string;
  let buildStderr: string;
  beforeAll(async () => {
    p = new Project();
    const r = await p.run(["build", SPEC]);
    expect(r.exitCode, r.stderr).toBe(0);
    buildStderr = r.stderr;
    // The expected line, from the counts the run recorded.
    const m = JSON.parse(p.read(`${RESULT}/metrics.json`)) as {
      tables: { counts: { parser_our_choice: number; api_errors: number }; notes: number };
    };
    const c = m.tables.counts;
    notice = `${c.parser_our_choice} of ${m.tables.notes - c.api_errors} replies were read by a parser rule`;
  });
  afterAll(() => p.remove());

  it("by build", () => {
    expect(buildStderr).toContain(notice);
  });

  it("by check, under the run, and in its JSON", async () => {
    const text = await p.run(["check", SPEC]);
    expect(text.stdout).toMatch(new RegExp(`  prior [^\\n]*\\n[^\\n]*notice ${notice}`));
    const json = await p.run(["check", SPEC, "--json"]);
    const report = JSON.parse(json.stdout) as { runs: { role: string; notices: string[] }[] };
    const prior = report.runs.find((r) => r.role === "prior")!;
    expect(prior.notices.some((n) => n.startsWith(notice))).toBe(true);
  });

  it("by the report, among the run's audit facts", async () => {
    const r = await p.run(["report", "-o", "report.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = /<script id="data" type="application\/json">(.*?)<\/script>/s.exec(p.read("report.html"));
    expect(data, "the page's data").not.toBeNull();
    const tasks = JSON.parse(data![1]!) as { slug: string; runs: { notices: string[] }[] }[];
    const run = tasks.find((t) => t.slug === "syn-snuh-note-errors")!.runs[0]!;
    expect(run.notices.some((n) => n.startsWith(notice))).toBe(true);
  });
});
