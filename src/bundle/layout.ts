// The result bundle: a result with everything needed to check it elsewhere (no data, no secret).
//   bundle.json                 what was built: spec path and hash, stage keys and output hashes, pins
//   spec/<path>                 the spec file and its file inputs (templates, schemas) at their project
// paths
//   stages/<stage>.json         each stage's key record (kind, code hashes, params, input hashes)
//   outputs/<stage>/<output>    every stage output but the downloaded data
import type { KeyRecord } from "../runner/keys/keys.js";
import { STAGE_KINDS } from "../../stages/index.js";

export const BUNDLE_FORMAT = 1;

export interface BundleStage {
  kind: string;
  key: string;
  outputs: Record<string, string>;
  record: KeyRecord;
}

export interface BundleManifest {
  format: number;
  slug: string;
  version: number;
  spec_hash: string;
  spec: string; // project path of the spec file
  files: string[]; // project paths of the spec's file inputs
  /** A task of the author's repository (src/runner/code/user-task.ts): its source files (`tasks/<name>/…`),
   *  bundled under spec/ so that verify compiles and replays the task anywhere. */
  task_files?: string[];
  variables: Record<string, unknown>;
  medbench: string;
  results: Record<string, string>; // results file -> stage/output
  pins: Record<string, Record<string, string>>;
  stages: Record<string, BundleStage>;
  /** A private release: outputs left out (`stage/output`) and why (src/bundle/private.ts). */
  withheld?: { why: string; outputs: string[] };
}

// What a bundle does with a stage's outputs is the stage kind's to say (StageKind.inBundle).
const inBundle = (kind: string) => STAGE_KINDS.get(kind)?.inBundle;
/** Its outputs are data, not results: never bundled (a verifier brings its own copy). */
export const isData = (kind: string) => inBundle(kind) === "data";
/** It reads the data: its outputs are taken from the bundle, never recomputed by verify. */
export const readsData = (kind: string) => inBundle(kind) === "data" || inBundle(kind) === "reads-data";
/** It calls models: replayed from the bundle, re-sent only by verify --live. */
export const callsModel = (kind: string) => inBundle(kind) === "model";

export function outputPath(stage: string, output: string): string {
  return `outputs/${stage}/${encodeURIComponent(output)}`;
}
