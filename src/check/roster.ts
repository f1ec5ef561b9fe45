// The run each roster entry stands for: a full (not partial) build for the spec's current spec_hash, of the
// headline configuration, all on the same files (the release, or else the bundled sample). A run that cannot
// be used says why, and how to get one that can.
import type { SpecFile } from "../spec/load.js";
import { RouteRegistry, type Routes } from "../model/routes.js";
import type { CheckDecl, RosterEntry } from "./declare.js";
import { reasoningProblem } from "./reasoning.js";
import {
  apiErrorRate,
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

/** The build to suggest for a roster model: as is for a built-in baseline (`medbench/…`) or a route medbench
 *  ships; with the registries given (`registries`) when they hold its route; else with a registry that
 *  must add it (a route no registry has would only fail). */
function suggestBuild(specPath: string, model: string, shipped: Routes, withGiven: Routes): string {
  const registries = withGiven.given;
  const route = model.split("/")[0]!;
  const cmd = `medbench build ${specPath} --model ${model}`;
  if (route === "medbench" || shipped.has(route)) return cmd;
  const given = registries.map((r) => ` --registry ${r}`).join("");
  if (registries.length && withGiven.has(route)) return cmd + given;
  const file = registries[0] ?? "routes.yaml";
  return (
    `${cmd}${given || ` --registry ${file}`}, after adding a route \`${route}\` to ${file} ` +
    (registries.length
      ? ""
      : "(medbench ships none of that name; `medbench init` writes a routes.yaml to start from)")
  ).trimEnd();
}

const short = (h: string | undefined) => (h ? `${h.slice(0, 12)}…` : "none");
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

export function rosterRuns(
  spec: SpecFile,
  check: CheckDecl,
  found: FoundRun[],
  o: RosterOptions,
): { runs: RosterRun[]; inputs: "release" | "sample" | null } {
  const shipped = new RouteRegistry([]);
  const withGiven = new RouteRegistry(o.registries ?? []);
  const buildCmd = (model: string) => suggestBuild(spec.path, model, shipped, withGiven);
  const usable = (m: MetricsJson) =>
    !m.partial &&
    m.spec_hash === spec.specHash &&
    (o.headline === null || m.configuration === undefined || m.configuration === o.headline);
  const full = new Map<string, FoundRun[]>();
  for (const e of check.roster)
    full.set(
      e.role,
      found.filter((f) => f.metrics?.model === e.model && usable(f.metrics)),
    );
  // The release when any roster run was built from it; the bundled sample otherwise. Never a mix.
  const anyRelease = [...full.values()].some((fs) => fs.some((f) => !onSample(f.metrics!)));
  const anyRun = [...full.values()].some((fs) => fs.length > 0);
  const inputs = anyRelease ? "release" : anyRun ? "sample" : null;

  const runs = check.roster.map((e): RosterRun => {
    const base = {
      ...e,
      runTags: e.tags,
      dir: null,
      metrics: null,
      interval: null,
      apiErrorRate: null,
    };
    // The headline judged on the headline: a run of the headline alone before a --configurations run.
    const pick = [...full.get(e.role)!]
      .sort(
        (a, b) =>
          Number(a.metrics!.configurations !== undefined) - Number(b.metrics!.configurations !== undefined),
      )
      .find((f) => onSample(f.metrics!) === (inputs === "sample"));
    if (!pick)
      return { ...base, status: "missing", reason: whyMissing(spec, e, found, o, inputs, buildCmd(e.model)) };
    const m = pick.metrics!;
    const rate = apiErrorRate(m);
    const run: RosterRun = {
      ...e,
      runTags: tagsOf(check, m),
      status: "ok",
      reason: null,
      dir: pick.dir,
      metrics: m,
      interval: intervalOf(m, check.metric),
      apiErrorRate: rate,
    };
    if (!run.interval)
      return { ...run, status: "missing", reason: `${pick.dir}: metrics.json has no ${check.metric}` };
    // The roster's reasoning requirement, against what the run recorded it sent and got back.
    const unlike = reasoningProblem(e.reasoning, m, buildCmd(e.model));
    if (unlike) return { ...run, status: "incomplete", reason: `${pick.dir}: ${unlike}` };
    if (o.apiIncompleteAt !== null && rate !== null && rate >= o.apiIncompleteAt)
      return {
        ...run,
        status: "incomplete",
        reason:
          `API errors ${pct(rate)} of the requests ` +
          `(${String(m.metrics?.api_errors)} of ${String(m.requests ?? m.selection?.items)}), ` +
          `at or above ${pct(o.apiIncompleteAt)}: build again (${buildCmd(e.model)}); ` +
          "the next build sends only the failed requests",
      };
    return run;
  });
  return { runs, inputs };
}

function whyMissing(
  spec: SpecFile,
  e: RosterEntry,
  found: FoundRun[],
  o: RosterOptions,
  inputs: "release" | "sample" | null,
  cmd: string,
): string {
  const mine = found.filter((f) => f.metrics?.model === e.model).map((f) => ({ dir: f.dir, m: f.metrics! }));
  const edited = found.find((f) => f.modified && f.claimedModel === e.model);
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
  const headline = whole.filter((x) => o.headline === null || x.m.configuration === o.headline);
  if (!headline.length)
    return `only runs of configuration ${String(whole[0]!.m.configuration)}, not ${o.headline}: ${cmd}`;
  return inputs === "release"
    ? `only a run on the bundled sample (${headline[0]!.dir}); the other runs are on the release: ` +
        `${cmd} --data-dir DIR`
    : `no run on the bundled sample: ${cmd}`;
}
