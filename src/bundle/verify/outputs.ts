// The outputs check: every bundled output and results file against the hash the build recorded.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { resultSource } from "../../specfile/load.js";
import { sha256Hex } from "../../hash/sha256.js";
import type { BundleManifest } from "../layout.js";
import type { Check, Outputs, ResultName } from "./types.js";

const changed = (what: string, actual: string, recorded: string) =>
  `${what} was changed after the build: ` +
  `sha256 ${actual.slice(0, 16)}…, recorded ${recorded.slice(0, 16)}…`;

/** The stage outputs under outputs/: missing or changed ones, and how many were compared. */
function stageOutputLines(
  manifest: BundleManifest,
  published: Outputs,
  withheld: readonly string[],
  resultName: ResultName,
): { lines: string[]; count: number } {
  const lines: string[] = [];
  let count = 0;
  for (const [stage, outputs] of published) {
    for (const [output, expected] of Object.entries(manifest.stages[stage]!.outputs)) {
      if (withheld.includes(`${stage}/${output}`)) continue;
      const data = outputs.get(output);
      count++;
      if (!data) lines.push(`${resultName(stage, output)} is missing from the bundle`);
      else if (sha256Hex(data) !== expected)
        lines.push(changed(`${resultName(stage, output)} (${stage}/${output})`, sha256Hex(data), expected));
    }
  }
  return { lines, count };
}

/** The files under results/: changed ones, and how many were compared (a missing one: the members check). */
function resultFileLines(dir: string, manifest: BundleManifest): { lines: string[]; count: number } {
  const lines: string[] = [];
  let count = 0;
  for (const [file, from] of Object.entries(manifest.results)) {
    const { stage, output } = resultSource(from);
    const path = join(dir, "results", file);
    if (!existsSync(path)) continue;
    count++;
    const actual = sha256Hex(readFileSync(path));
    const recorded = manifest.stages[stage]?.outputs[output];
    if (actual !== recorded) lines.push(changed(`results/${file}`, actual, String(recorded)));
  }
  return { lines, count };
}

export function checkOutputs(
  dir: string,
  manifest: BundleManifest,
  published: Outputs,
  withheld: readonly string[],
  resultName: ResultName,
): Check {
  const outputs = stageOutputLines(manifest, published, withheld, resultName);
  const results = resultFileLines(dir, manifest);
  const lines = [...outputs.lines, ...results.lines];
  if (lines.length) return { name: "outputs", ok: false, lines };
  return {
    name: "outputs",
    ok: true,
    lines: [`${outputs.count + results.count} files match their recorded hashes`],
  };
}
