// What every check reads from an unpacked bundle: bundle.json (checked before use) and the bundled stage
// outputs, with the results file each is published as.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { isData, outputPath, type BundleManifest } from "../layout.js";
import { checkManifest } from "../limits.js";
import type { Outputs, ResultName } from "./types.js";
import { UsageError } from "../../errors.js";

/** bundle.json, parsed and checked (fields, paths, names) before any of it is used. */
export function readManifest(label: string, dir: string): BundleManifest {
  const text = readFileSync(join(dir, "bundle.json")); // its size was checked with the members
  let manifest: unknown;
  try {
    manifest = JSON.parse(text.toString("utf8"));
  } catch (e) {
    throw new UsageError(
      `${label} is not a medbench bundle: bundle.json is not JSON (${(e as Error).message})`,
    );
  }
  checkManifest(label, manifest);
  return manifest as BundleManifest;
}

/** The bundled outputs of every stage but the data stages, as the bundle holds them. */
export function publishedOutputs(dir: string, manifest: BundleManifest): Outputs {
  const published: Outputs = new Map();
  for (const [stage, bundled] of Object.entries(manifest.stages)) {
    if (isData(bundled.kind)) continue;
    const outputs = new Map<string, Buffer>();
    for (const output of Object.keys(bundled.outputs)) {
      const file = join(dir, outputPath(stage, output));
      if (existsSync(file)) outputs.set(output, readFileSync(file));
    }
    published.set(stage, outputs);
  }
  return published;
}

/** The results file a stage output is published as, or `stage/output`. */
export const resultNamer =
  (manifest: BundleManifest): ResultName =>
  (stage, output) =>
    Object.entries(manifest.results).find(([, from]) => from === `${stage}/${output}`)?.[0] ??
    `${stage}/${output}`;
