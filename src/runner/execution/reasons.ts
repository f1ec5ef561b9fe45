// Why a stage is not fresh, in words, worked out from the cache's manifests: `status` words it against the
// last build of these variables, a build's stage line says why the stage runs.
import type { Cache } from "../store/cache.js";
import type { KeyRecord } from "../keys/keys.js";
import { explain } from "./explain.js";
import { stageCode } from "../keys/stage-code.js";
import { installRoot } from "../../util/paths.js";
import type { Json } from "../../util/json.js";
import type { StageDecl } from "../../specfile/load.js";
import type { Runtime } from "./scope.js";

const MISSING = "outputs missing from the cache";

/** A stage keyed `key` that is not fresh, against the locked build's key of it (`lockedKey`). */
export interface Stale {
  key: string;
  record: KeyRecord;
  paths: Record<string, string>;
  lockedKey: string | undefined;
}

/** Why `status` calls a stage stale (or never built). */
export function staleReasons(cache: Cache, stale: Stale): string[] {
  if (!stale.lockedKey) return ["never built"];
  const last = cache.readManifest(stale.key);
  if (last?.incomplete)
    return [`its last run was incomplete (${last.incomplete}); the next build runs it again`];
  const old = cache.readManifest(stale.lockedKey);
  const reasons = old
    ? explain(old.record, stale.record, stale.paths)
    : [last ? MISSING : "the previous build's record is not in this cache"];
  return reasons.length ? reasons : [MISSING];
}

/** Why a build runs a stage that is not fresh: what changed in its key record since the locked build (none:
 *  never built; no record: that build's record is not in this cache). */
export function runReasons(cache: Cache, stale: Stale): string[] {
  const same = cache.readManifest(stale.key);
  if (same?.incomplete) return [`its last run was incomplete (${same.incomplete})`];
  if (!stale.lockedKey) return ["never built"];
  if (stale.lockedKey === stale.key) return [MISSING];
  const old = cache.readManifest(stale.lockedKey);
  if (!old?.record) return [];
  const reasons = explain(old.record, stale.record, stale.paths);
  return reasons.length ? reasons : [MISSING];
}

/** What changed in a stage's own code and parameters since the build that recorded `lockedKey`, worked out
 *  before its inputs are known (a stage upstream must run first). */
export function ownChanges(
  rt: Runtime,
  cache: Cache,
  decl: StageDecl,
  lockedKey: string | undefined,
): string[] {
  const old = lockedKey ? cache.readManifest(lockedKey) : null;
  if (!old?.record) return [];
  const kind = rt.kinds.get(decl.kind)!;
  const { code, packages, task } = stageCode(installRoot(), kind, decl.params as Json, rt.task);
  return explain(old.record, { ...old.record, code, packages, task, params: decl.params as Json });
}
