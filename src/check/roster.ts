// The run each roster entry stands for: a full (not partial) build for the spec's current spec_hash, of the
// headline configuration, all on the same files (the release, or else the bundled sample). A run that cannot
// be used says why, and how to get one that can.
import type { SpecFile } from "../specfile/load.js";
import { RouteRegistry, type Routes } from "../model/routes.js";
import type { CheckDecl, RosterEntry } from "./declare.js";
import { reasoningProblem } from "./reasoning.js";
import {
  apiErrorRate,
  FINE_TUNED,
  intervalOf,
  onSample,
  tagsOf,
  type FoundRun,
  type Interval,
  type MetricsJson,
} from "./runs.js";

export interface RosterRun extends RosterEntry {
  /** The run's tags: the roster's (`tags`, what exceptions read) and those its results show (tagsOf). */
  runTags: string[];
  /** ok: used; missing: no usable build; incomplete: built, but with too many API errors to count, or not
   *  as the roster requires (its reasoning: src/check/reasoning.ts). */
  status: "ok" | "missing" | "incomplete";
  reason: string | null;
  dir: string | null;
  metrics: MetricsJson | null;
  interval: Interval | null;
  apiErrorRate: number | null;
}

export interface RosterOptions {
  /** The configuration a run must report as its own (the task's headline), when the task has any. */
  headline: string | null;
  /** API errors at or above this share make a run incomplete. */
  apiIncompleteAt: number | null;
  /** The route registries the user builds with (--registry), named in the builds suggested. */
  registries?: string[];
}

/** The build to suggest for a roster model: as is for a built-in baseline (`medbench/…`); with the
 *  registries given when they hold its route (they may override a shipped route: a build without them would
 *  go to the shipped route's server); as is for a route medbench ships; else with a registry that must add
 *  it (a route no registry has would only fail). */
function suggestBuild(specPath: string, model: string, shipped: Routes, withGiven: Routes): string {
  const registries = withGiven.given;
  const route = model.split("/")[0]!;
  const cmd = `medbench build ${specPath} --model ${model}`;
  if (route === "medbench") return cmd;
  const given = registries.map((registry) => ` --registry ${registry}`).join("");
  if (registries.length && withGiven.has(route)) return cmd + given;
  if (shipped.has(route)) return cmd;
  const file = registries[0] ?? "routes.yaml";
  return (
    `${cmd}${given || ` --registry ${file}`}, after adding a route \`${route}\` to ${file} ` +
    (registries.length
      ? ""
      : "(medbench ships none of that name; `medbench init` writes a routes.yaml to start from)")
  ).trimEnd();
}

const short = (hash: string | undefined) => (hash ? `${hash.slice(0, 12)}…` : "none");
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

export function rosterRuns(
  spec: SpecFile,
  check: CheckDecl,
  found: FoundRun[],
  options: RosterOptions,
): { runs: RosterRun[]; inputs: "release" | "sample" | null } {
  const shipped = new RouteRegistry([]);
  const withGiven = new RouteRegistry(options.registries ?? []);
  const buildCmd = (model: string) => suggestBuild(spec.path, model, shipped, withGiven);
  const full = usableRuns(spec, check, found, options);
  // The release when any roster run was built from it; the bundled sample otherwise. Never a mix.
  const anyRelease = [...full.values()].some((runs) => runs.some((run) => !onSample(run.metrics!)));
  const anyRun = [...full.values()].some((runs) => runs.length > 0);
  const inputs = anyRelease ? "release" : anyRun ? "sample" : null;

  const runs = check.roster.map((entry): RosterRun => {
    // The headline judged on the headline: a run of the headline alone before a --configurations run.
    const pick = [...full.get(entry.role)!]
      .sort(
        (left, right) =>
          Number(left.metrics!.configurations !== undefined) -
          Number(right.metrics!.configurations !== undefined),
      )
      .find((candidate) => onSample(candidate.metrics!) === (inputs === "sample"));
    if (pick) return judgedRun(check, entry, pick, options, buildCmd);
    return {
      ...entry,
      runTags: entry.tags,
      dir: null,
      metrics: null,
      interval: null,
      apiErrorRate: null,
      status: "missing",
      reason: whyMissing({ spec, found, options, inputs }, entry, buildCmd(entry.model)),
    };
  });
  return { runs, inputs };
}

/** Each role's runs of the current spec, whole, and of the headline configuration when there is one. */
function usableRuns(
  spec: SpecFile,
  check: CheckDecl,
  found: FoundRun[],
  options: RosterOptions,
): Map<string, FoundRun[]> {
  // A fine-tuned run stands for no roster entry (kept off the headline), unless the entry says it is one.
  const usable = (metrics: MetricsJson, entry: RosterEntry) =>
    !metrics.partial &&
    (metrics.trained_on === undefined || entry.tags.includes(FINE_TUNED)) &&
    metrics.spec_hash === spec.specHash &&
    (options.headline === null ||
      metrics.configuration === undefined ||
      metrics.configuration === options.headline);
  const full = new Map<string, FoundRun[]>();
  for (const entry of check.roster)
    full.set(
      entry.role,
      found.filter((run) => run.metrics?.model === entry.model && usable(run.metrics, entry)),
    );
  return full;
}

/** The picked run of a roster entry: ok, or why it cannot count. */
function judgedRun(
  check: CheckDecl,
  entry: RosterEntry,
  pick: FoundRun,
  options: RosterOptions,
  buildCmd: (model: string) => string,
): RosterRun {
  const metrics = pick.metrics!;
  const rate = apiErrorRate(metrics);
  const run: RosterRun = {
    ...entry,
    runTags: tagsOf(check, metrics),
    status: "ok",
    reason: null,
    dir: pick.dir,
    metrics: metrics,
    interval: intervalOf(metrics, check.metric),
    apiErrorRate: rate,
  };
  if (!run.interval)
    return { ...run, status: "missing", reason: `${pick.dir}: metrics.json has no ${check.metric}` };
  // The roster's reasoning requirement, against what the run recorded it sent and got back.
  const unlike = reasoningProblem(entry.reasoning, metrics, buildCmd(entry.model));
  if (unlike) return { ...run, status: "incomplete", reason: `${pick.dir}: ${unlike}` };
  if (options.apiIncompleteAt !== null && rate !== null && rate >= options.apiIncompleteAt)
    return {
      ...run,
      status: "incomplete",
      reason:
        `API errors ${pct(rate)} of the requests ` +
        `(${String(metrics.metrics?.api_errors)} of ` +
        `${String(metrics.requests ?? metrics.selection?.items)}), ` +
        `at or above ${pct(options.apiIncompleteAt)}: build again (${buildCmd(entry.model)}); ` +
        "the next build sends only the failed requests",
    };
  return run;
}

/** Where a roster entry's run was looked for: the spec, the runs found, the check's options, and the inputs
 *  (release or bundled sample) the roster's runs were built from. */
interface RosterSearch {
  spec: SpecFile;
  found: FoundRun[];
  options: RosterOptions;
  inputs: "release" | "sample" | null;
}

/** Why no run of `entry` counts, and the build (`cmd`) that makes one. */
function whyMissing(search: RosterSearch, entry: RosterEntry, cmd: string): string {
  const { spec, found, options, inputs } = search;
  const mine = found
    .filter((run) => run.metrics?.model === entry.model)
    .map((run) => ({ dir: run.dir, m: run.metrics! }));
  const edited = found.find((run) => run.modified && run.claimedModel === entry.model);
  if (edited) return `${edited.dir} is modified since build (${edited.modified}), not counted: ${cmd}`;
  if (!mine.length) return `no run: ${cmd}`;
  const current = mine.filter((x) => x.m.spec_hash === spec.specHash);
  if (!current.length)
    return (
      `${mine[0]!.dir} was built from spec_hash ${short(mine[0]!.m.spec_hash)}, not the current ` +
      `${short(spec.specHash)}: ${cmd}`
    );
  const whole = current.filter((x) => !x.m.partial);
  if (!whole.length) return `only a partial run (${current[0]!.dir}, --limit or --subset): ${cmd}`;
  const tuned = whole.find((x) => x.m.trained_on !== undefined);
  if (tuned && !entry.tags.includes(FINE_TUNED))
    return (
      `${tuned.dir} was built as a model fine-tuned on this task's ${String(tuned.m.trained_on)} split, ` +
      `which is kept off the headline and stands for no roster entry: ${cmd}, without --var trained_on`
    );
  const headline = whole.filter((x) => options.headline === null || x.m.configuration === options.headline);
  const configuration = String(whole[0]!.m.configuration);
  if (!headline.length)
    return `only runs of configuration ${configuration}, not ${options.headline}: ${cmd}`;
  return inputs === "release"
    ? `only a run on the bundled sample (${headline[0]!.dir}); the other runs are on the release: ` +
        `${cmd} --data-dir DIR`
    : `no run on the bundled sample: ${cmd}`;
}
