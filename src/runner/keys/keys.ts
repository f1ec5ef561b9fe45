// Stage keys: sha256 of a canonical, fixed-order record of everything that can change a stage's outputs.
import { fromPlain, pyDumps } from "../../hash/pyjson.js";
import { sha256Hex } from "../../hash/sha256.js";
import { HASH_RECIPE } from "../../specfile/hash.js";
import type { Json } from "../../util/json.js";

declare const brand: unique symbol;
/** A stage key; only stageKey() makes one. */
export type StageKey = string & { readonly [brand]: "StageKey" };

export interface KeyRecord {
  recipe: number;
  kind: string;
  code: Record<string, string>; // compiled module or task data file -> sha256
  packages: Record<string, string>; // npm package that code imports -> exact version
  task: Json; // the task parts the stage calls and where each comes from (src/runner/keys/stage-code.ts)
  params: Json;
  inputs: Record<string, Record<string, string>>; // input name -> output name -> sha256
  identity: Json; // what the kind works out itself (download: the content hash of each file)
}

export function keyRecord(fields: Omit<KeyRecord, "recipe">): KeyRecord {
  return { recipe: HASH_RECIPE, ...fields };
}

export function stageKey(record: KeyRecord): StageKey {
  return sha256Hex(Buffer.from(pyDumps(fromPlain(record)), "utf8")) as StageKey;
}
