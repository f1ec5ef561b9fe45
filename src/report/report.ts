// medbench report: one static page, offline, with every run of the given specs: a table of runs, a forest
// plot of the intervals, the breakdowns, the paired comparisons, and each run's audit facts.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { glob } from "tinyglobby";
import { parseSourceDoc } from "../spec/document.js";
import { UsageError } from "../cli/args.js";
import { writeFileAtomic } from "../runner/fsutil.js";
import { PAGE_SCRIPT, PAGE_STYLE } from "./page.js";
import { metricsProblem, readResultJson } from "../util/result-files.js";

export interface ReportRun {
  dir: string;
  model: string | null;
  partial: boolean;
  metrics: Record<string, unknown>;
}
/** A results folder whose metrics.json is not a run's result (listed as such; the rest is rendered). */
export interface BrokenRun {
  dir: string;
  why: string;
}
export interface ReportTask {
  slug: string;
  spec: string;
  specHash: string;
  runs: ReportRun[];
  broken: BrokenRun[];
}

export async function collectRuns(specs: string[], root: string): Promise<ReportTask[]> {
  const files = specs.length
    ? specs
    : existsSync(join(root, "specs"))
      ? readdirSync(join(root, "specs"))
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
          .map((f) => `specs/${f}`)
      : [];
  if (!files.length)
    throw new UsageError("no spec to report on: name spec files, or run in a project with specs/");
  const tasks: ReportTask[] = [];
  for (const spec of files) {
    const path = resolve(root, spec);
    if (!existsSync(path)) throw new UsageError(`${spec}: no such file`);
    const doc = parseSourceDoc(readFileSync(path), spec).value as { slug?: string; spec_hash?: string };
    if (!doc?.slug) continue;
    const found = (await glob([`results/${doc.slug}/*/metrics.json`], { cwd: root })).sort();
    const runs: ReportRun[] = [];
    const broken: BrokenRun[] = [];
    for (const f of found) {
      const metrics = readResultJson(join(root, f), f) as { model?: string; partial?: boolean };
      const why = metricsProblem(metrics);
      if (why) broken.push({ dir: dirname(f), why });
      else
        runs.push({
          dir: dirname(f),
          model: metrics.model ?? basename(dirname(f)),
          partial: Boolean(metrics.partial),
          metrics,
        });
    }
    tasks.push({
      slug: doc.slug,
      spec,
      specHash: String(
        (runs[0]?.metrics as { spec_hash?: string } | undefined)?.spec_hash ?? doc.spec_hash ?? "",
      ),
      runs,
      broken,
    });
  }
  return tasks;
}

/** Keeps `</script>` and friends inside embedded JSON from closing the element. */
const scriptSafe = (s: string) => s.replace(/</g, "\\u003c");

export function renderPage(tasks: ReportTask[]): string {
  // The UMD build, inlined so the page works offline (the package exports no path to it; it sits beside the main file).
  const chartJs = readFileSync(
    join(dirname(createRequire(import.meta.url).resolve("chart.js")), "chart.umd.min.js"),
    "utf8",
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>medbench report</title><style>${PAGE_STYLE}</style></head>
<body><header><h1>medbench report</h1><p>Every run found under <code>results/</code>; intervals are 95 %, with the method each metric records.</p></header>
<main id="tasks"></main>
<script id="data" type="application/json">${scriptSafe(JSON.stringify(tasks))}</script>
<script>${chartJs.replace(/<\/script/gi, "<\\/script")}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}

export async function writeReport({
  specs,
  output: out,
  root,
}: {
  specs: string[];
  output: string;
  root: string;
}): Promise<{ file: string; runs: number; tasks: number; broken: string[] }> {
  const tasks = await collectRuns(specs, root);
  const file = resolve(root, out);
  writeFileAtomic(file, renderPage(tasks), dirname(file));
  return {
    file: out,
    runs: tasks.reduce((n, t) => n + t.runs.length, 0),
    tasks: tasks.length,
    broken: tasks.flatMap((t) => t.broken.map((b) => `${b.dir}: ${b.why}`)),
  };
}
