// The replay check: every stage that needs neither data nor a model recomputed from the bundle, compared
// output by output with the published result (metric by metric, verdict by verdict), with the code it ran.
import type { StageDecl } from "../../specfile/load.js";
import type { UserTask } from "../../runner/code/user-task.js";
import { medbenchVersion } from "../../util/paths.js";
import { callsModel, type BundleManifest } from "../layout.js";
import { codeDifferences, takenAsIs, type TaskInfo } from "./code.js";
import { describe } from "./differences.js";
import { runStages } from "./run-stages.js";
import type { Check, Difference, Recomputed, Replay, ResultName, VerifyReport } from "./types.js";

export interface ReplayResult {
  check: Check;
  differences: Difference[];
  code_differences: VerifyReport["code_differences"];
  /** The verdicts check of a private bundle, whose verdicts are taken as recorded; null otherwise. */
  verdicts: Check | null;
}

/** Where the replay's inputs come from, in words (a private release withholds some). */
function replayedFrom(manifest: BundleManifest, withheld: readonly string[]): string {
  const noReplies = withheld.some(
    (path) => manifest.stages[path.split("/")[0]!] && callsModel(manifest.stages[path.split("/")[0]!]!.kind),
  );
  return !withheld.length
    ? "the bundled replies"
    : noReplies
      ? "the bundled items (a private release: its requests and replies are not bundled; " +
        "the verdicts stand as the items record them)"
      : "the bundled replies and items (a private release: its requests are not bundled)";
}

function differencesOf(
  replayed: StageDecl[],
  recomputed: Recomputed,
  replay: Replay,
  resultName: ResultName,
): Difference[] {
  const differences: Difference[] = [];
  for (const decl of replayed) {
    for (const [output, data] of recomputed.get(decl.name) ?? []) {
      const published = replay.published.get(decl.name)?.get(output);
      if (published && published.equals(data)) continue;
      differences.push(...describe(resultName(decl.name, output), published, data));
    }
  }
  return differences;
}

/** The replay's lines: its outcome, what was not replayed, and the code it ran against the recorded. */
function replayLines(
  names: string,
  from: string,
  differences: number,
  recomputed: Recomputed,
  code: VerifyReport["code_differences"],
): string[] {
  return [
    differences === 0
      ? `${names} recomputed from ${from}: every metric, interval and verdict identical`
      : `${names} recomputed from ${from}: ${differences} difference(s)`,
    ...[...recomputed.notReplayed].map(([stage, why]) => `${stage} not replayed: ${why}`),
    `replayed with this medbench's code (medbench ${medbenchVersion()}), ` +
      (code.length
        ? "which differs from the code the bundle's records name, per replayed stage:"
        : "for every replayed stage the code the bundle's records name"),
    ...code.map((diff) => `  ${diff.stage}: ${diff.changes.join("; ")}`),
  ];
}

/** `user`: the task's sources when it is one of the author's repository (their code is compared too). */
export async function checkReplay(
  replay: Replay,
  user: UserTask | null,
  resultName: ResultName,
): Promise<ReplayResult> {
  const { spec, manifest, withheld } = replay;
  const taskInfo: TaskInfo = { name: spec.task ?? "", module: replay.task, user };
  const recomputed = await runStages(replay, false);
  const replayed = spec.stages.filter((decl) => recomputed.has(decl.name) && recomputed.ran.has(decl.name));
  const differences = differencesOf(replayed, recomputed, replay, resultName);
  const code_differences = codeDifferences(replayed, manifest, taskInfo);
  const takenAsRecorded = spec.stages.filter(
    (decl) => recomputed.notReplayed.has(decl.name) || recomputed.rescored.has(decl.name),
  );
  const verdicts = takenAsRecorded.length ? takenAsIs(takenAsRecorded, manifest, taskInfo) : null;
  const names = replayed.map((decl) => decl.name).join(", ");
  const from = replayedFrom(manifest, withheld);
  const lines = replayLines(names, from, differences.length, recomputed, code_differences);
  return {
    check: { name: "replay", ok: differences.length === 0, lines },
    differences,
    code_differences,
    verdicts,
  };
}

/** The replay check when the spec or the task does not load. */
export function replayNotRun(): ReplayResult {
  const check = { name: "replay", ok: false, lines: ["not run: the spec does not load"] };
  return { check, differences: [], code_differences: [], verdicts: null };
}
