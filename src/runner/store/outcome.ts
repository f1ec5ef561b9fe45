// One record shape for a stage's outcome. Its kind, key and outputs are what medbench.lock and build.json
// record of a stage; the cache's manifest adds the key record (to explain staleness), the spec's file
// inputs by name (for messages) and why a run is not whole; a bundle carries the outcome with its record.
import type { KeyRecord } from "../keys/keys.js";

export interface StageOutcome {
  kind: string;
  key: string;
  outputs: Record<string, string>;
}

export interface StageManifest extends StageOutcome {
  record: KeyRecord; // the canonical record the key hashes, kept to explain staleness
  paths?: Record<string, string>; // file inputs by name, for messages
  incomplete?: string; // why these outputs are not whole: the stage runs again at the next build
}

/** A manifest with its fields in the order the cache writes them (its bytes depend on that order). */
export function stageManifest(
  outcome: StageOutcome,
  record: KeyRecord,
  paths: Record<string, string>,
  incomplete?: string,
): StageManifest {
  const { key, kind, outputs } = outcome;
  return { key, kind, outputs, record, paths, ...(incomplete ? { incomplete } : {}) };
}

/** The manifest `data` holds when it is whole (not incomplete) and names `key`; else null (one copied from
 *  another store is taken only so). */
export function wholeManifest(data: Buffer, key: string): StageManifest | null {
  try {
    const manifest = JSON.parse(data.toString("utf8")) as StageManifest;
    return manifest.key === key && !manifest.incomplete && typeof manifest.outputs === "object"
      ? manifest
      : null;
  } catch {
    return null;
  }
}
