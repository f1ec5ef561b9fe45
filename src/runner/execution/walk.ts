// The keyed walk: every stage of the plan in order, keyed against the outputs of the stages before it and
// looked up in the cache, yielded as data (its key record, fresh / stale / missing, and why). `build` runs
// what is not fresh and settles its outputs; `status` settles nothing, so what reads a stale stage waits.
import { stageKey, type KeyRecord, type StageKey } from "../keys/keys.js";
import type { LockBuild } from "../results/lock.js";
import type { StageManifest, StageOutcome } from "../store/outcome.js";
import { codeOf, freshManifest, stageContext, stageRecord, type BuildScope } from "./scope.js";
import { ownChanges, staleReasons, type Stale, type Wording } from "./reasons.js";
import type { StageContext } from "../../contract/stage.js";
import type { StageDecl } from "../../specfile/load.js";

/** `missing`: never built (the lock records no build of it with these variables). */
export type Freshness = "fresh" | "stale" | "missing";

export interface KeyedStage {
  key: StageKey;
  record: KeyRecord;
  paths: Record<string, string>;
  /** The cache's manifest of this key when it ran whole and its outputs are intact, else null. */
  fresh: StageManifest | null;
  /** The cache's manifest of this key, whole or not (an incomplete run's), or null: read once per build. */
  last: StageManifest | null;
}

export interface WalkedStage {
  decl: StageDecl;
  freshness: Freshness;
  /** Why it is not fresh, worded for the walk's reader (`status`, or a build's stage line); none if fresh. */
  reasons: string[];
  /** Its key in the last build of these variables that medbench.lock records. */
  lockedKey: string | undefined;
  /** null when it is not keyed: it reads a stage that has not settled (`waitingOn`), or keying failed. */
  keyed: KeyedStage | null;
  waitingOn: string[];
  /** Why keying failed: a build fails the stage with it. */
  error?: unknown;
  /** The context it was keyed in (a build runs it in the same one), and the temporary files it asked for. */
  ctx?: StageContext;
  temps: string[];
}

export type { Wording } from "./reasons.js";

export class KeyedWalk {
  /** Stage name -> its outcome, for the stages settled so far: the lock's and build.json's record. */
  readonly outcomes: LockBuild["stages"] = {};
  private readonly held = new Set<string>();

  constructor(
    private readonly scope: BuildScope,
    private readonly locked: LockBuild | undefined,
    private readonly wording: Wording,
  ) {}

  /** The stage's outputs are known (taken as fresh, or made by a run): the stages that read it are keyed. */
  settle(decl: StageDecl, key: string, outputs: Record<string, string>): void {
    this.scope.upstream.set(decl.name, outputs);
    this.outcomes[decl.name] = { kind: decl.kind, key, outputs } satisfies StageOutcome;
  }

  /** The stages that read this one wait for it, settled or not (its outputs are not whole yet). */
  hold(name: string): void {
    this.held.add(name);
  }

  async *stages(): AsyncGenerator<WalkedStage> {
    for (const decl of this.scope.rt.plan.order) yield await this.visit(decl);
  }

  private async visit(decl: StageDecl): Promise<WalkedStage> {
    const lockedKey = this.locked?.stages[decl.name]?.key;
    const waitingOn = Object.values(decl.inputs).flatMap((ref) =>
      "stage" in ref && (this.held.has(ref.stage) || !this.scope.upstream.has(ref.stage)) ? [ref.stage] : [],
    );
    if (waitingOn.length) return this.waiting(decl, lockedKey, waitingOn);
    const temps: string[] = [];
    const ctx = stageContext(decl, this.scope, temps);
    const base = { decl, lockedKey, waitingOn, ctx, temps };
    let keyed: KeyedStage;
    try {
      keyed = await this.key(decl, ctx);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const reasons = [`cannot be keyed: ${message.split("\n")[0]}`];
      return { ...base, freshness: "stale", reasons, keyed: null, error: e };
    }
    if (keyed.fresh) {
      this.settle(decl, keyed.key, keyed.fresh.outputs);
      return { ...base, freshness: "fresh", reasons: [], keyed };
    }
    const { key, record, paths, last } = keyed;
    const stale: Stale = { key, record, paths, lockedKey, last };
    const reasons = staleReasons(this.scope.cache, stale, this.wording);
    return { ...base, freshness: lockedKey ? "stale" : "missing", reasons, keyed };
  }

  /** Its key record, its key, and the cache's whole run of that key if there is one. */
  private async key(decl: StageDecl, ctx: StageContext): Promise<KeyedStage> {
    const { record, paths } = await stageRecord(decl, this.scope, ctx);
    const key = stageKey(record);
    const { cache } = this.scope;
    const last = await cache.fetchManifest(key);
    return { key, record, paths, fresh: await freshManifest(cache, key, last), last };
  }

  /** A stage that reads one not settled: what changed in its own code and parameters is all that is known. */
  private waiting(decl: StageDecl, lockedKey: string | undefined, waitingOn: string[]): WalkedStage {
    const { cache } = this.scope;
    const reasons =
      this.wording === "status"
        ? [
            ...ownChanges(cache, decl, codeOf(this.scope, decl), lockedKey),
            ...waitingOn.map((name) => `its input from stage ${name} may change (that stage runs first)`),
          ]
        : [];
    const freshness = lockedKey ? "stale" : "missing";
    return { decl, freshness, reasons, lockedKey, keyed: null, waitingOn, temps: [] };
  }
}
