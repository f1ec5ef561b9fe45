// The check's `beside:` names (metrics the report's leaderboard shows beside the check's metric) are checked
// against the runs the report lists: a name no run holds is refused at its file:line:column with the names
// it could be, exit 2, nothing written; names the runs hold are shown.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { Project } from "../support/rig.js";

const SPEC = "specs/note-errors.yaml";
const SHIPPED = "beside: [bcr_strict]";
/** The metrics.json of the one run built (the offline main job, medbench/prior). */
const RUN_METRICS = "results/syn-snuh-note-errors/medbench_prior/neutral-greedy/metrics.json";

/** Where `name` stands in the spec's `beside:` line (1-based line and column). */
function placeOf(text: string, line: string, name: string): string {
  const lines = text.split("\n");
  const index = lines.findIndex((l) => l.trim() === line);
  return `${SPEC}:${index + 1}:${lines[index]!.indexOf(name) + 1}`;
}

const REFUSED = [
  { beside: "[bcr_strictt]", unknown: ["bcr_strictt"] },
  { beside: "[bcr_strict, bcr_lenient]", unknown: ["bcr_lenient"] },
  { beside: "[Bcr, bcr_strict, mccc]", unknown: ["Bcr", "mccc"] },
];

describe("the check's beside: names", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    const r = await p.run(["build", SPEC, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(() => p?.remove());

  it.each(REFUSED)(
    "refuses beside: $beside, naming $unknown where it stands",
    async ({ beside, unknown }) => {
      const line = `beside: ${beside}`;
      const edited = p.read(SPEC).replace(SHIPPED, line);
      const err = await p.refuses((text) => text.replace(SHIPPED, line), {
        file: SPEC,
        args: ["report", SPEC, "-o", "report.html"],
      });
      expect(existsSync(p.path("report.html"))).toBe(false);
      for (const name of unknown) {
        expect(err).toContain(placeOf(edited, line, name));
        expect(err).toContain(`beside: ${name} is not a metric of any run of syn-snuh-note-errors`);
      }
      expect(err.match(/is not a metric of any run/g)).toHaveLength(unknown.length);
      // The fix names the metrics the runs hold, the shipped one among them.
      expect(err).toMatch(/name one of the runs' metrics: [^\n]*\bbcr_strict\b/);
    },
  );

  it("shows the names the runs hold", async () => {
    const metrics = Object.keys(JSON.parse(p.read(RUN_METRICS)).metrics as object);
    const held = ["bcr_strict", "mcc"].filter((name) => metrics.includes(name));
    expect(held).toEqual(["bcr_strict", "mcc"]);
    p.write(SPEC, p.read(SPEC).replace(SHIPPED, `beside: [${held.join(", ")}]`));
    const r = await p.run(["report", SPEC, "-o", "report.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(p.path("report.html"))).toBe(true);
    // The page's data shows them beside the run's headline, each with the run's own value.
    const data = /<script id="data" type="application\/json">([^<]*)<\/script>/.exec(p.read("report.html"));
    const tasks = JSON.parse(data![1]!) as {
      leaderboard: { beside: { metric: string; value: number }[] }[];
    }[];
    const rows = tasks.flatMap((task) => task.leaderboard);
    expect(rows).toHaveLength(1);
    const values = JSON.parse(p.read(RUN_METRICS)).metrics as Record<string, { value: number }>;
    expect(rows[0]!.beside.map(({ metric, value }) => [metric, value])).toEqual(
      held.map((name) => [name, values[name]!.value]),
    );
  });
});
