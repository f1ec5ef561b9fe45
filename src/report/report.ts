// medbench report: one static page, offline, with every run of the given specs: each task's leaderboard and
// check, a table of runs, a forest plot of the intervals, the breakdowns, the paired comparisons, and each
// run's audit facts.
import { existsSync, readFileSync } from "../util/builtins.js";
import { basename, dirname, join, resolve } from "node:path";
import { parseSourceDoc } from "../specfile/document.js";
import { projectSpecs } from "../specfile/project-specs.js";
import type { SpecFile } from "../specfile/load.js";
import { loadRuntime } from "../load/runtime.js";
import { runCheck, type CheckReport } from "../check/check.js";
import { declaredCheck, type CheckDecl } from "../check/declare.js";
import { checkBeside } from "../check/beside.js";
import { FINE_TUNED, findRuns, intervalOf, setAside, tagsOf, type MetricsJson } from "../check/runs.js";
import { UsageError } from "../errors.js";
import { writeFileAtomic } from "../util/fsutil.js";
import { runDeviations, runNotices, type Deviation } from "../util/metrics.js";
import { openProject, projectPath } from "../runner/project/project.js";
import { inlineSafe, itemsScript, itemsStyle, pageScript, pageStyle } from "./page.js";
import { writeItems, type RunItems } from "./items.js";
import { costWords, runCost } from "../model/price.js";
import type { Route } from "../model/registry.js";
import type { Json } from "../util/json.js";

export interface ReportRun {
  dir: string;
  model: string | null;
  partial: boolean;
  metrics: Record<string, unknown>;
  /** What the run's result says every reader must know (runNotices). */
  notices: string[];
  /** Its tokens' cost at the registry's prices, in words (src/model/price.ts). */
  cost: string;
  /** Where the item view finds its items (set as the report writes them). */
  items?: RunItems;
}
/** A metric shown beside the primary: its point and interval. */
type IntervalOf = { metric: string; value: number | null; lo: number | null; hi: number | null };

/** One full run on a task's leaderboard: its primary metric with the interval, and its tags. */
export interface LeaderboardRow {
  model: string;
  dir: string;
  configuration: string | null;
  value: number | null;
  lo: number | null;
  hi: number | null;
  n: number | null;
  unit: string;
  tags: string[];
  /** Built for the spec as it is now (its spec_hash). */
  current: boolean;
  /** Ranked on the headline: false for a model fine-tuned on the task's data (listed below, unranked). */
  headline: boolean;
  /** Metrics a tag rule asks to show too (e.g. BCR without the pairs a reviewer saw). */
  also: IntervalOf[];
  /** The check's metrics shown beside the headline (e.g. the strict parser's BCR), with intervals. */
  beside: IntervalOf[];
  /** How the run's requests differed from the spec (metrics.json deviations): marked on its row. */
  deviations: Deviation[];
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
  primary: string | null;
  runs: ReportRun[];
  leaderboard: LeaderboardRow[];
  check: CheckReport | null;
  broken: BrokenRun[];
  /** Results folders whose files are not what their build wrote: listed apart, never ranked. */
  modified: BrokenRun[];
  /** What the task's private release keeps out of anything published (the item view obeys it). */
  privateRelease: { why: string; withhold: string[] } | null;
  /** The verdicts the task compares runs on (its `compare`): what the item view's flips default to. */
  compared: string[];
}

/** A route of the registries the report prices runs with. */
type RouteOf = (name: string) => Route | undefined;
/** The route registries the user builds with: their routes (prices) and their files (named in hints). */
export interface ReportRoutes {
  route: RouteOf;
  registries: string[];
}

export async function collectRuns(
  specs: string[],
  root: string,
  routes: ReportRoutes,
): Promise<ReportTask[]> {
  const files = specs.length ? specs : projectSpecs(root);
  if (!files.length)
    throw new UsageError("no spec to report on: name spec files, or run in a project with specs/");
  const tasks: ReportTask[] = [];
  for (const spec of files) {
    const path = resolve(root, spec);
    if (!existsSync(path)) throw new UsageError(`${spec}: no such file`);
    const doc = parseSourceDoc(readFileSync(path), spec).value as { slug?: string };
    if (!doc?.slug) continue;
    const rt = await loadRuntime(path, {});
    const task = await taskOf(rt.spec, rt.task.module.headline ?? null, spec, root, routes);
    const { privateRelease = null, compare } = rt.task.module;
    tasks.push({
      ...task,
      privateRelease,
      compared: compare?.verdicts.map((verdict) => verdict.name) ?? [],
    });
  }
  return tasks;
}

async function taskOf(
  spec: SpecFile,
  headline: string | null,
  name: string,
  root: string,
  routes: ReportRoutes,
): Promise<Omit<ReportTask, "privateRelease" | "compared">> {
  // A metrics.json that is not JSON stops the report, naming it; one that is no run's result is listed.
  // Two specs of one slug (a built-in and the project's copy of it) each list the runs they built.
  const own = projectPath(openProject(root), resolve(root, name));
  const found = (await findRuns(root, spec.slug, { refuseInvalid: true })).filter((run) =>
    [own, null].includes(builtBy(join(root, run.dir))),
  );
  const runs = found
    .filter((run) => run.metrics)
    .map((run) => ({
      dir: run.dir,
      model: run.metrics!.model ?? basename(run.dir),
      partial: Boolean(run.metrics!.partial),
      metrics: run.metrics as Record<string, unknown>,
      notices: runNotices(run.metrics!),
      cost: costWords(runCost(run.metrics as Record<string, Json>, routes.route)),
    }));
  const decl = declaredCheck(spec);
  const full = found.filter((run) => run.metrics && !run.metrics.partial);
  if (decl)
    checkBeside(
      spec,
      decl,
      full.map((run) => run.metrics!),
    );
  const primary = decl?.metric ?? (runs[0]?.metrics.primary as string | undefined) ?? null;
  const leaderboard = full
    .map((run) => leaderboardRow(spec, decl, run.dir, run.metrics!, primary))
    .sort(
      (left, right) =>
        Number(right.headline) - Number(left.headline) ||
        (right.value ?? -Infinity) - (left.value ?? -Infinity) ||
        left.model.localeCompare(right.model),
    );
  return {
    slug: spec.slug,
    spec: name,
    specHash: spec.specHash,
    primary,
    runs,
    leaderboard,
    check: decl ? await runCheck({ ...spec, path: name }, decl, root, headline, routes.registries) : null,
    ...setAside(found),
  };
}

/** The spec build.json says built a results folder (null when it does not say: listed with every spec). */
function builtBy(dir: string): string | null {
  try {
    const spec = (JSON.parse(readFileSync(join(dir, "build.json"), "utf8")) as { spec?: unknown }).spec;
    return typeof spec === "string" ? spec : null;
  } catch {
    return null;
  }
}

function leaderboardRow(
  spec: SpecFile,
  decl: CheckDecl | null,
  dir: string,
  metrics: MetricsJson,
  primary: string | null,
): LeaderboardRow {
  const metric = primary ?? metrics.primary ?? "";
  const i = intervalOf(metrics, metric);
  const model = String(metrics.model ?? basename(dir));
  const tags = tagsOf(decl, metrics);
  const shown = (name: string): IntervalOf => {
    const interval = intervalOf(metrics, name);
    return {
      metric: name,
      value: interval?.value ?? null,
      lo: interval?.lo ?? null,
      hi: interval?.hi ?? null,
    };
  };
  const also = (decl?.tags ?? [])
    .filter((rule) => rule.alsoReport && rule.models.test(model))
    .map((rule) => shown(rule.alsoReport!));
  return {
    model,
    dir,
    configuration: typeof metrics.configuration === "string" ? metrics.configuration : null,
    value: i?.value ?? null,
    lo: i?.lo ?? null,
    hi: i?.hi ?? null,
    n: i?.n ?? null,
    unit: String((metrics.metrics?.[metric] as { unit?: string } | undefined)?.unit ?? "proportion"),
    tags,
    current: metrics.spec_hash === spec.specHash,
    headline: !tags.includes(FINE_TUNED),
    also,
    beside: (decl?.beside ?? []).map(shown),
    deviations: runDeviations(metrics),
  };
}

/** Keeps `</script>` and friends inside embedded JSON from closing the element. */
const scriptSafe = (text: string) => text.replace(/</g, "\\u003c");

export function renderPage(tasks: ReportTask[]): string {
  // The UMD build, inlined so the page works offline (the package exports no path to it; it sits beside the
  // main file).
  const chartJs = readFileSync(join(dirname(require.resolve("chart.js")), "chart.umd.min.js"), "utf8");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>medbench report</title><style>${pageStyle()}</style>
<style>${itemsStyle()}</style></head>
<body><header><h1>medbench report</h1>
<p>Every run found under <code>results/</code>; intervals are 95 %, with the method each metric records.</p>
</header>
<main id="tasks"></main>
<script id="data" type="application/json">${scriptSafe(JSON.stringify(tasks))}</script>
<script>${inlineSafe(chartJs, "script")}</script>
<script>${pageScript()}</script>
<script>${itemsScript()}</script>
</body></html>
`;
}

export async function writeReport({
  specs,
  output: out,
  root,
  routes,
}: {
  specs: string[];
  output: string;
  root: string;
  routes: ReportRoutes;
}): Promise<{ file: string; runs: number; tasks: number; broken: string[]; modified: string[] }> {
  const tasks = await collectRuns(specs, root, routes);
  const file = resolve(root, out);
  writeItems(tasks, file, root);
  writeFileAtomic(file, renderPage(tasks), dirname(file));
  return {
    file: out,
    runs: tasks.reduce((sum, task) => sum + task.runs.length, 0),
    tasks: tasks.length,
    broken: tasks.flatMap((task) => task.broken.map((run) => `${run.dir}: ${run.why}`)),
    modified: tasks.flatMap((task) => task.modified.map((run) => `${run.dir}: ${run.why}`)),
  };
}
