// A private release's bundle: the outputs of the record types its task withholds (requests holding the
// notes, a fitted model's vocabulary) are left out, and bundle.json says which and why.
import { STAGE_KINDS } from "../../stages/index.js";
import type { TaskModule } from "../../tasks/task.js";
import { isData, type BundleManifest } from "./layout.js";

/** `stage/output` of every output the task's privateRelease withholds, sorted (none for other tasks). */
export function withheldOutputs(
  stages: Record<string, { kind: string; outputs: Record<string, string> }>,
  task: TaskModule | null,
): string[] {
  const withhold = new Set<string>(task?.privateRelease?.withhold ?? []);
  if (!withhold.size) return [];
  const out: string[] = [];
  for (const [name, st] of Object.entries(stages)) {
    if (isData(st.kind)) continue; // never bundled anyway
    const types = STAGE_KINDS.get(st.kind)?.outputs;
    const typeOf = (output: string) =>
      types && types !== "release" ? (types as Record<string, string>)[output] : undefined;
    for (const output of Object.keys(st.outputs))
      if (withhold.has(typeOf(output) ?? "")) out.push(`${name}/${output}`);
  }
  return out.sort();
}

/** What bundle.json records of it (absent for a task without a private release). */
export function withheldField(
  stages: BundleManifest["stages"],
  task: TaskModule,
): Pick<BundleManifest, "withheld"> {
  const outputs = withheldOutputs(stages, task);
  return task.privateRelease ? { withheld: { why: task.privateRelease.why, outputs } } : {};
}
