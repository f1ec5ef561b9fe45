// Why each stage is fresh, stale or never built, worked out without running anything: the keyed walk, read.
import { Cache } from "../store/cache.js";
import { buildId, readLock } from "../results/lock.js";
import { resultsDifferences } from "../results/results.js";
import { projectPath } from "../project/project.js";
import {
  newScope,
  privatePartial,
  projectSource,
  resultsSuffix,
  type BuildOptions,
  type BuildScope,
  type Runtime,
} from "./scope.js";
import type { MemoStore } from "../../contract/stage.js";
import type { SendEstimate } from "../../model/budget.js";
import { KeyedWalk, type WalkedStage } from "./walk.js";

export interface StageState {
  name: string;
  kind: string;
  state: "fresh" | "stale" | "never built";
  key: string | null;
  reasons: string[];
  /** What running it would send, per model (a model or judge stage that is not fresh). */
  estimate?: Record<string, SendEstimate>;
}

export async function stageStates(rt: Runtime, opts: BuildOptions): Promise<StageState[]> {
  const lock = readLock(opts.project.lockPath);
  const previous = lock.specs[projectPath(opts.project, rt.spec.path)];
  const scope = newScope(rt, opts, new Cache(opts.project.cacheDir), previous);
  // The last build with the same variables (model, configurations, …) is what this one is compared with.
  const walk = new KeyedWalk(projectSource(scope), {
    cache: scope.cache,
    locked: previous?.builds[buildId(rt.spec.variables, opts.dataDir !== undefined)],
    wording: "status",
  });
  const states: StageState[] = [];
  for await (const walked of walk.stages()) {
    const state = stateOf(walked);
    const estimate = await sendEstimate(scope, walked);
    states.push(estimate ? { ...state, estimate } : state);
  }
  if (rt.spec.results && states.every((state) => state.state === "fresh")) {
    // Every stage is fresh: the results folder must then be exactly what they make.
    const reasons = await resultsDifferences({
      spec: rt.spec,
      project: opts.project,
      suffix: resultsSuffix(scope),
      cache: scope.cache,
      upstream: scope.upstream,
      stages: walk.outcomes,
      privatePartial: privatePartial(rt, opts),
    });
    if (reasons.length)
      states.push({ name: "results", kind: "results", state: "stale", key: null, reasons });
  }
  return states;
}

/** What a stage that is not fresh would send (a kind that sends requests says), read from this machine's
 *  reply memo alone: status claims nothing on the shared remote and writes nothing. */
async function sendEstimate(
  scope: BuildScope,
  walked: WalkedStage,
): Promise<Record<string, SendEstimate> | null> {
  const kind = scope.rt.kinds.get(walked.decl.kind);
  if (walked.freshness === "fresh" || !walked.keyed || !walked.ctx || !kind?.estimate) return null;
  const { replyLog, replyFolder } = await import("../replies/memo.js");
  const logs = new Map<string, ReturnType<typeof replyLog>>();
  const memo: MemoStore = {
    get(ns, key) {
      let log = logs.get(ns);
      if (!log) logs.set(ns, (log = replyLog(scope.cache, replyFolder(ns), false)));
      return log.get(key);
    },
    put() {
      throw new Error("status writes no reply");
    },
  };
  return kind.estimate({ ...walked.ctx, memo });
}

function stateOf(walked: WalkedStage): StageState {
  const { decl, freshness, reasons } = walked;
  return {
    name: decl.name,
    kind: decl.kind,
    state: freshness === "missing" ? "never built" : freshness,
    key: walked.keyed?.key ?? null,
    reasons,
  };
}
