// The keyed walk: every stage of the plan in order, keyed against the outputs of the stages before it and
// looked up in the cache, yielded as data (its key record, fresh / stale / missing, and why). `build` runs
// what is not fresh and settles its outputs; `status` settles nothing, so what reads a stale stage waits.
// `export` and `verify` walk a recorded build: each stage settled with the outputs its build recorded, and
// no lookup (they read the records).
import { keyRecord, stageKey, type KeyRecord, type StageKey } from "../keys/keys.js";
import type { StageCode } from "../keys/stage-code.js";
import type { Cache } from "../store/cache.js";
import type { LockBuild } from "../results/lock.js";
import type { StageManifest, StageOutcome } from "../store/outcome.js";
import { freshManifest } from "./scope.js";
import { ownChanges, staleReasons, type Stale, type Wording } from "./reasons.js";
import type { StageContext } from "../../contract/stage.js";
import type { StageDecl } from "../../specfile/load.js";
import type { Json } from "../../util/json.js";

/** What a walk keys stages from: a project (`projectSource` in scope.ts), or a recorded build (export's
 *  result, verify's bundle) whose code and identities are taken as recorded where they cannot be redone. */
export interface KeySource {
  /** The stages in a dependency order. */
  readonly order: StageDecl[];
  /** Stage name -> its outputs (name -> sha256), for the stages settled so far. */
  readonly upstream: Map<string, Record<string, string>>;
  /** The context a stage is keyed and run in (`temps` collects the temporary files it asks for); none for
   *  a recorded build, whose stages the walk does not run. */
  context?(decl: StageDecl, temps: string[]): StageContext;
  /** The code the stage runs (src/runner/keys/stage-code.ts). */
  code(decl: StageDecl): StageCode;
  /** The sha256 of the file a file input names. */
  fileHash(decl: StageDecl, input: string, file: string): Promise<string>;
  /** What the stage's kind works out itself (a download's content hashes). */
  identity(decl: StageDecl, ctx: StageContext | undefined): Promise<Json>;
}

/** Where a walk looks its keys up: the cache, against the last build of these variables the lock records. */
export interface Lookup {
  cache: Cache;
  locked: LockBuild | undefined;
  wording: Wording;
}

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
  /** Why it is not fresh, worded for the walk's reader (`status`, or a build's stage line); none if
   *  fresh. */
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

  /** `lookup` null: a recorded build's walk, which looks nothing up (every stage is yielded missing). */
  constructor(
    private readonly source: KeySource,
    private readonly lookup: Lookup | null,
  ) {}

  /** The stage's outputs are known (taken as fresh, made by a run, or as recorded): its readers are
   *  keyed. */
  settle(decl: StageDecl, key: string, outputs: Record<string, string>): void {
    this.source.upstream.set(decl.name, outputs);
    this.outcomes[decl.name] = { kind: decl.kind, key, outputs } satisfies StageOutcome;
  }

  /** The stages that read this one wait for it, settled or not (its outputs are not whole yet). */
  hold(name: string): void {
    this.held.add(name);
  }

  async *stages(): AsyncGenerator<WalkedStage> {
    for (const decl of this.source.order) yield await this.visit(decl);
  }

  private async visit(decl: StageDecl): Promise<WalkedStage> {
    const lockedKey = this.lookup?.locked?.stages[decl.name]?.key;
    const waitingOn = Object.values(decl.inputs).flatMap((ref) =>
      "stage" in ref && (this.held.has(ref.stage) || !this.source.upstream.has(ref.stage))
        ? [ref.stage]
        : [],
    );
    if (waitingOn.length) return this.waiting(decl, lockedKey, waitingOn);
    const temps: string[] = [];
    const ctx = this.source.context?.(decl, temps);
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
    const reasons = this.lookup ? staleReasons(this.lookup.cache, stale, this.lookup.wording) : [];
    return { ...base, freshness: lockedKey ? "stale" : "missing", reasons, keyed };
  }

  /** Its key record, its key, and the cache's whole run of that key if there is one. */
  private async key(decl: StageDecl, ctx: StageContext | undefined): Promise<KeyedStage> {
    const { record, paths } = await this.record(decl, ctx);
    const key = stageKey(record);
    const cache = this.lookup?.cache;
    const last = cache ? await cache.fetchManifest(key) : null;
    return { key, record, paths, fresh: cache ? await freshManifest(cache, key, last) : null, last };
  }

  /** Everything a stage's key is made of, given its upstream outputs; `paths`: its file inputs'. */
  private async record(decl: StageDecl, ctx: StageContext | undefined) {
    const { upstream } = this.source;
    const { code, packages, task } = this.source.code(decl);
    const inputs: Record<string, Record<string, string>> = {};
    const paths: Record<string, string> = {};
    for (const [name, ref] of Object.entries(decl.inputs)) {
      if ("stage" in ref) inputs[name] = upstream.get(ref.stage)!;
      else {
        inputs[name] = { file: await this.source.fileHash(decl, name, ref.file) };
        paths[name] = ref.file;
      }
    }
    const identity = await this.source.identity(decl, ctx);
    const { params } = decl;
    return { record: keyRecord({ kind: decl.kind, code, packages, task, params, inputs, identity }), paths };
  }

  /** A stage that reads one not settled: what changed in its own code and parameters is all that is
   *  known. */
  private waiting(decl: StageDecl, lockedKey: string | undefined, waitingOn: string[]): WalkedStage {
    const { cache, wording } = this.lookup ?? {};
    const reasons =
      cache && wording === "status"
        ? [
            ...ownChanges(cache, decl, this.source.code(decl), lockedKey),
            ...waitingOn.map((name) => `its input from stage ${name} may change (that stage runs first)`),
          ]
        : [];
    const freshness = lockedKey ? "stale" : "missing";
    return { decl, freshness, reasons, lockedKey, keyed: null, waitingOn, temps: [] };
  }
}

/**
 * A recorded build (export's result, verify's bundle: its stages' manifests) walked again: each stage keyed
 * from the spec, its files (`fileHash`) and the outputs the stages it reads recorded, with the code its
 * record names and the identity `identity` works out again (null: as recorded), then settled with its
 * recorded outputs.
 */
export async function rekeyRecorded(
  order: StageDecl[],
  recorded: Record<string, StageManifest>,
  fileHash: KeySource["fileHash"],
  identity?: (decl: StageDecl) => Promise<{ value: Json } | null>,
): Promise<Map<string, WalkedStage>> {
  const recordOf = (decl: StageDecl) => recorded[decl.name]?.record;
  const source: KeySource = {
    order,
    upstream: new Map(),
    code: (decl) => {
      const record = recordOf(decl);
      return { code: record?.code ?? {}, packages: record?.packages ?? {}, task: record?.task ?? null };
    },
    fileHash,
    identity: async (decl) =>
      ((await identity?.(decl)) ?? { value: recordOf(decl)?.identity as Json }).value,
  };
  const walk = new KeyedWalk(source, null);
  const out = new Map<string, WalkedStage>();
  for await (const walked of walk.stages()) {
    out.set(walked.decl.name, walked);
    const stage = recorded[walked.decl.name];
    walk.settle(walked.decl, stage?.key ?? "", stage?.outputs ?? {});
  }
  return out;
}
