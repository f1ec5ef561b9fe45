// What a finished build answers: its --json summary line (stdout) and its exit code, with the words on
// stderr that go with an incomplete one.
import { BATCHES_PENDING_EXIT } from "../errors.js";
import type { BuildReport } from "../runner/execution/executor.js";

/** The one JSON object `build --json` prints last on stdout (README "Commands"): complete false goes with
 *  exit 1. */
export function jsonSummary(specHash: string, report: BuildReport): string {
  return (
    JSON.stringify({
      spec_hash: specHash,
      complete: report.unwhole.length === 0,
      stages: report.stages.map((stage) => ({
        name: stage.name,
        kind: stage.kind,
        status: stage.status,
        key: stage.key,
        ...(stage.incomplete ? { incomplete: stage.incomplete } : {}),
      })),
      results: report.results,
    }) + "\n"
  );
}

/** A build whose model requests did not all get an answer is not a success (exit 1): its results are written
 *  and marked incomplete, and the next build sends only the failed requests (docs/model-requests.md). One
 *  whose only unanswered requests wait in provider batches exits BATCHES_PENDING_EXIT. `stderr`: what to
 *  say. */
export function incompleteVerdict(unwhole: { name: string; incomplete?: string }[]): {
  exit: number;
  stderr: string;
} {
  if (unwhole.length === 0) return { exit: 0, stderr: "" };
  const stages = unwhole.map((stage) => `stage ${stage.name}: ${stage.incomplete}`).join("; ");
  if (unwhole.every((stage) => stage.incomplete?.endsWith("rerun to collect")))
    return {
      exit: BATCHES_PENDING_EXIT,
      stderr: `${stages}\n  (exit ${BATCHES_PENDING_EXIT}: the batches are running)\n`,
    };
  return {
    exit: 1,
    stderr:
      `error: the build is incomplete: ${stages}\n` +
      "  the results are written and marked incomplete (metrics.json: incomplete: true), never complete\n" +
      "  fix: rerun the build to retry the failed requests (only those are sent)\n",
  };
}
