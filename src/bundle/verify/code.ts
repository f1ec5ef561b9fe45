// The code a replay ran against the code the bundle's records name, per stage, and the verdicts check of
// a private bundle (what the replay takes as the bundle records it is worth what made it).
import { STAGE_KINDS } from "../../../stages/index.js";
import type { UserTask } from "../../runner/code/user-task.js";
import type { StageDecl } from "../../specfile/load.js";
import type { TaskModule } from "../../../tasks/task.js";
import { stageCode } from "../../runner/keys/stage-code.js";
import { codeChanges } from "../../runner/execution/explain.js";
import { installRoot } from "../../util/paths.js";
import type { Json } from "../../util/json.js";
import type { BundleManifest } from "../layout.js";
import type { Check, VerifyReport } from "./types.js";

export type TaskInfo = { name: string; module: TaskModule; user?: UserTask | null };

/** Per replayed stage, what differs between the code the bundle's record names and this medbench's code
 *  for it (what the replay ran). Stages whose code is the same are left out. */
export function codeDifferences(
  replayed: StageDecl[],
  manifest: BundleManifest,
  task: TaskInfo,
): VerifyReport["code_differences"] {
  const out: VerifyReport["code_differences"] = [];
  for (const decl of replayed) {
    const recorded = manifest.stages[decl.name]?.record;
    const kind = STAGE_KINDS.get(decl.kind);
    if (!recorded || !kind) continue;
    const now = stageCode(installRoot(), kind, decl.params as Json, task);
    const changes = codeChanges(recorded.code, now.code);
    const packages = new Set([...Object.keys(recorded.packages ?? {}), ...Object.keys(now.packages)]);
    for (const name of [...packages].sort())
      if (recorded.packages?.[name] !== now.packages[name])
        changes.push(
          `package ${name} ${recorded.packages?.[name] ?? "(none)"} -> ${now.packages[name] ?? "(none)"}`,
        );
    if (changes.length) out.push({ stage: decl.name, changes });
  }
  return out;
}

/**
 * A private bundle's verdicts (and what else the replay takes from the bundle as it is, `stages`) cannot be
 * produced again here: the replies they were read from are withheld. They are worth what the code that
 * produced them is worth, so that code must be this medbench's: when it differs, the result is not
 * verifiable here (a failing check), whatever the replay of the rest says.
 */
export function takenAsIs(stages: StageDecl[], manifest: BundleManifest, task: TaskInfo): Check {
  const names = stages.map((decl) => decl.name).join(", ");
  const differ = codeDifferences(stages, manifest, task);
  if (!differ.length)
    return {
      name: "verdicts",
      ok: null,
      lines: [
        `taken as the bundle records them (${names}: the replies are withheld, a private release), ` +
          "made by the same code as this medbench's",
      ],
    };
  return {
    name: "verdicts",
    ok: false,
    lines: [
      `not verifiable: ${names} are taken as the bundle records them (the replies are withheld, a private ` +
        "release), and the code that made them differs from this medbench's:",
      ...differ.map((diff) => `  ${diff.stage}: ${diff.changes.join("; ")}`),
      `verify with the medbench the bundle was built with (medbench ${manifest.medbench}) and its task code`,
    ],
  };
}
