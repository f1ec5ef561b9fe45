// What `--frozen` and `--shard` change in a build, each decided in one place.
import type { Cache, StageManifest } from "../store/cache.js";
import { lockText, type LockBuild, type LockFile } from "../results/lock.js";
import { BuildFailure, StageError } from "../../errors.js";
import type { Shard } from "../../remote/shard.js";

const UNFREEZE = "run `medbench build` without --frozen and commit medbench.lock";

/** Where a build is checked against medbench.lock: each step throws where `--frozen` refuses it. */
export interface FrozenPolicy {
  /** Before any stage is keyed. */
  start(): void;
  /** Before a stage is taken as fresh or runs (before any model request); `last`: the cache's manifest of
   *  its key, whole or not (KeyedStage.last). */
  stage(name: string, key: string, runs: boolean, last: StageManifest | null): void;
  /** Before results are written, given the lock as this build would leave it. */
  lock(next: LockFile, before: LockFile): void;
  /** Whether the build may write medbench.lock. */
  writesLock: boolean;
}

export interface FrozenFacts {
  specPath: string;
  variableSet: string;
  /** This spec's (same spec_hash) recorded build of these variables. */
  locked: LockBuild | undefined;
  /** Why this build is not recorded in medbench.lock, or null. */
  unrecorded: string | null;
}

/** `--frozen`: fail instead of changing medbench.lock (for CI), and send no request. */
export function frozenPolicy(frozen: boolean, facts: FrozenFacts): FrozenPolicy {
  if (!frozen) return { start: () => {}, stage: () => {}, lock: () => {}, writesLock: true };
  const { locked, unrecorded } = facts;
  return {
    start: () => {
      if (unrecorded)
        throw new BuildFailure(
          "lock",
          `--frozen checks a build against medbench.lock, and ${unrecorded}`,
          "build it without --frozen",
        );
      // A variable set the lock has never recorded would add an entry: refused whole, before any stage is
      // keyed.
      if (!locked)
        throw new BuildFailure(
          "lock",
          `medbench.lock records no build of ${facts.specPath} ` +
            `with ${facts.variableSet || "its variables"}, ` +
            "and --frozen forbids adding one",
          UNFREEZE,
        );
    },
    stage: (name, key, runs, last) => {
      // No request is sent: a stage whose last run left requests unanswered would send them.
      const unfinished = runs ? last : null;
      if (unfinished?.key === key && unfinished.incomplete)
        throw new StageError(
          `its last run was incomplete (${unfinished.incomplete}), and --frozen sends no request`,
          "build without --frozen to send the failed requests again, then commit medbench.lock",
        );
      if (locked?.stages[name]?.key !== key)
        throw new StageError(
          `medbench.lock would change (stage ${name}: its key differs from the locked one), ` +
            "and --frozen forbids it",
          UNFREEZE,
        );
    },
    lock: (next, before) => {
      if (lockText(next) !== lockText(before))
        throw new BuildFailure("lock", "medbench.lock would change, and --frozen forbids it", UNFREEZE);
    },
    writesLock: false,
  };
}

/** What a build does with one machine's share of the model requests (`--shard I/N`), or without one. */
export interface ShardPolicy {
  /** The build lock's part of its name: builds of different shares run at once. */
  lockName: string;
  /** The results folders a build may replace, of `partial` (checked before anything is written). */
  resultsSuffixes(partial: string): string[];
  /** Whether the stages that read a stage left incomplete for this reason wait (a later plain build). */
  holds(incomplete: string | undefined): boolean;
  /** Whether a stage left incomplete for this reason makes the build incomplete (exit 1). */
  fails(incomplete: string | undefined): boolean;
  /** After the stages: whether the build ends there (no results, no lock); throws when this share's replies
   *  may not have reached the shared cache. */
  endsAfterStages(cache: Cache): Promise<boolean>;
}

export function shardPolicy(shard: Shard | undefined): ShardPolicy {
  if (!shard)
    return {
      lockName: "",
      resultsSuffixes: (partial) => [partial, `.release${partial}`],
      holds: () => false,
      fails: (incomplete) => Boolean(incomplete),
      endsAfterStages: async () => false,
    };
  return {
    lockName: `${shard.index}/${shard.count}`,
    // A share writes no results folder.
    resultsSuffixes: () => [],
    // A stage left incomplete needs every shard's replies: a later plain build runs it and its readers.
    holds: (incomplete) => Boolean(incomplete),
    // A shard leaves the other shards' requests by design: that alone is not a failure.
    fails: (incomplete) => Boolean(incomplete) && !/other shards/.test(incomplete!),
    endsAfterStages: async (cache) => {
      // A share of the requests: its replies are in the (shared) cache; results and lock wait for all
      // shares.
      await cache.remote?.settle();
      // A share that did not reach the shared cache is not done: the plain build would send it all again.
      if (cache.remote && !cache.remote.available)
        throw new BuildFailure(
          "shard",
          `shard ${shard.index}/${shard.count}: the shared cache failed during the build ` +
            `(${cache.remote.failure}), so this share's replies may not all be there; ` +
            "they are kept in this machine's cache",
          `run \`medbench cache push\` from this machine once ${cache.remote.config.url} answers, ` +
            "or build this shard again",
        );
      return true;
    },
  };
}
