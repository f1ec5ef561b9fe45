// Why a stage is not fresh, in words, worked out from the cache's manifests: `status` words it against the
// last build of these variables, a build's stage line says why the stage runs.
import type { Cache, StageManifest } from "../store/cache.js";
import type { KeyRecord } from "../keys/keys.js";
import { explain } from "./explain.js";
import type { StageCode } from "../keys/stage-code.js";
import type { Json } from "../../util/json.js";
import type { StageDecl } from "../../specfile/load.js";

const MISSING = "outputs missing from the cache";

/** Whose words the reasons are in: `status`'s, or a build's (why a stage runs). */
export type Wording = "status" | "build";

/** A stage keyed `key` that is not fresh, against the locked build's key of it (`lockedKey`). */
export interface Stale {
  key: string;
  record: KeyRecord;
  paths: Record<string, string>;
  lockedKey: string | undefined;
  /** The cache's manifest of `key` (read once, when the stage was looked up), whole or not, or null. */
  last: StageManifest | null;
}

/** Why a stage is not fresh: what changed in its key record since the locked build. `status` puts "never
 *  built" first and says when the record it compares with is not in this cache; a build's stage line puts
 *  an incomplete last run first and says nothing when that record is missing. */
export function staleReasons(cache: Cache, stale: Stale, wording: Wording): string[] {
  const { key, last, lockedKey } = stale;
  const status = wording === "status";
  const incomplete = last?.incomplete
    ? [`its last run was incomplete (${last.incomplete})${status ? "; the next build runs it again" : ""}`]
    : null;
  if (incomplete && (lockedKey || !status)) return incomplete;
  if (!lockedKey) return ["never built"];
  // The same key as the locked build's: its manifest is the one already read.
  const old = lockedKey === key ? last : cache.readManifest(lockedKey);
  if (!old?.record) {
    if (status) return [last ? MISSING : "the previous build's record is not in this cache"];
    return lockedKey === key ? [MISSING] : [];
  }
  const reasons = explain(old.record, stale.record, stale.paths);
  return reasons.length ? reasons : [MISSING];
}

/** What changed in a stage's own code (`code`) and parameters since the build that recorded `lockedKey`,
 *  worked out before its inputs are known (a stage upstream must run first). */
export function ownChanges(
  cache: Cache,
  decl: StageDecl,
  code: StageCode,
  lockedKey: string | undefined,
): string[] {
  const old = lockedKey ? cache.readManifest(lockedKey) : null;
  if (!old?.record) return [];
  const { packages, task } = code;
  return explain(old.record, {
    ...old.record,
    code: code.code,
    packages,
    task,
    params: decl.params as Json,
  });
}
