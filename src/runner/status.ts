// Why each stage is fresh, stale or never built, worked out without running anything.
import { Cache } from "./cache.js";
import { stageKey } from "./keys.js";
import { buildId, readLock, type LockBuild } from "./lock.js";
import { resultsDifferences } from "./results.js";
import { projectPath } from "./project.js";
import {
  freshManifest,
  stageContext,
  stageRecord,
  resultsSuffix,
  type BuildOptions,
  type BuildScope,
  type Manifest,
  type Runtime,
} from "./executor.js";
import type { KeyRecord } from "./keys.js";
import { explain } from "./explain.js";
import { stageCode } from "./stage-code.js";
import { installRoot } from "../util/paths.js";
import type { Json } from "../util/json.js";
import type { StageDecl } from "../spec/load.js";

export interface StageState {
  name: string;
  kind: string;
  state: "fresh" | "stale" | "never built";
  key: string | null;
  reasons: string[];
}

export async function stageStates(rt: Runtime, opts: BuildOptions): Promise<StageState[]> {
  const cache = new Cache(opts.project.cacheDir);
  const lock = readLock(opts.project.lockPath);
  const previous = lock.specs[projectPath(opts.project, rt.spec.path)];
  // The last build with the same variables (model, configurations, …) is what this one is compared with.
  const lockedBuild = previous?.builds[buildId(rt.spec.variables, opts.dataDir !== undefined)];
  const upstream = new Map<string, Record<string, string>>();
  const scope: BuildScope = {
    rt,
    opts,
    cache,
    upstream,
    sources: new Map(),
    previous,
    newPins: {},
    emit: () => {},
    memo: null, // keying a stage never reads replies
  };
  const states: StageState[] = [];
  const blocked = new Set<string>();
  const built: LockBuild["stages"] = {};
  for (const decl of rt.plan.order) {
    const inputsFrom = Object.values(decl.inputs).flatMap((r) => ("stage" in r ? [r.stage] : []));
    const waiting = inputsFrom.filter((s) => blocked.has(s));
    const locked = lockedBuild?.stages[decl.name];
    if (waiting.length) {
      blocked.add(decl.name);
      states.push({
        name: decl.name,
        kind: decl.kind,
        state: locked ? "stale" : "never built",
        key: null,
        reasons: [
          ...ownChanges(rt, decl, locked ? (cache.readManifest(locked.key) as Manifest | null) : null),
          ...waiting.map((s) => `its input from stage ${s} may change (that stage runs first)`),
        ],
      });
      continue;
    }
    const ctx = stageContext(decl, scope, []);
    let record: KeyRecord;
    let paths: Record<string, string>;
    try {
      ({ record, paths } = await stageRecord(decl, scope, ctx));
    } catch (e) {
      blocked.add(decl.name);
      states.push({
        name: decl.name,
        kind: decl.kind,
        state: "stale",
        key: null,
        reasons: [`cannot be keyed: ${(e as Error).message.split("\n")[0]}`],
      });
      continue;
    }
    const key = stageKey(record);
    const m = await freshManifest(cache, key);
    if (m) {
      upstream.set(decl.name, m.outputs);
      built[decl.name] = { kind: decl.kind, key, outputs: m.outputs };
      states.push({ name: decl.name, kind: decl.kind, state: "fresh", key, reasons: [] });
      continue;
    }
    blocked.add(decl.name);
    const old = locked ? (cache.readManifest(locked.key) as Manifest | null) : null;
    const last = cache.readManifest(key) as Manifest | null;
    const reasons = !locked
      ? ["never built"]
      : last?.incomplete
        ? [`its last run was incomplete (${last.incomplete}); the next build runs it again`]
        : old
          ? explain(old.record, record, paths)
          : [
              cache.readManifest(key)
                ? "outputs missing from the cache"
                : "the previous build's record is not in this cache",
            ];
    states.push({
      name: decl.name,
      kind: decl.kind,
      state: locked ? "stale" : "never built",
      key,
      reasons: reasons.length ? reasons : ["outputs missing from the cache"],
    });
  }
  if (rt.spec.results && states.every((s) => s.state === "fresh")) {
    // Every stage is fresh: the results folder must then be exactly what they make.
    const reasons = await resultsDifferences({
      spec: rt.spec,
      project: opts.project,
      suffix: resultsSuffix(scope),
      cache,
      upstream,
      stages: built,
    });
    if (reasons.length) states.push({ name: "results", kind: "results", state: "stale", key: null, reasons });
  }
  return states;
}

/** What changed in a stage's own code and parameters since the build recorded by `old`, worked out before
 *  its inputs are known (a stage upstream must run first). */
function ownChanges(rt: Runtime, decl: StageDecl, old: Manifest | null): string[] {
  if (!old?.record) return [];
  const kind = rt.kinds.get(decl.kind)!;
  const { code, packages, task } = stageCode(installRoot(), kind, decl.params as Json, rt.task);
  return explain(old.record, { ...old.record, code, packages, task, params: decl.params as Json });
}
