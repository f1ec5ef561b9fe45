// One build as `medbench build` runs it: the runtime loaded, the stages built, then the build's last words
// (where stages and replies came from, tokens and cost, the result's notices, build-done) and what the next
// run reuses kept (the parsed spec, the code memo).
import { join } from "node:path";
import type { BuildEvent } from "../contract/events.js";
import type { Json } from "../util/json.js";
import { build, type BuildOptions, type BuildReport } from "../runner/execution/executor.js";
import { loadBuildRuntime } from "../load/build-runtime.js";
import { loadingAhead } from "../load/ahead.js";
import { settleRemotes } from "../remote/opened.js";
import { remoteProvenance } from "../remote/provenance.js";
import { rememberParsedSpec } from "../specfile/load.js";
import { saveCodeMemo } from "../hash/code-memo.js";
import { readMetrics, summaryRows } from "../runner/results/summary.js";
import { costLine, runCost } from "../model/price.js";
import { commandRoutes } from "../model/routes.js";
import { runNotices } from "../util/metrics.js";

/** What a build is given: its spec and variables, its options, and where its events go. */
export interface BuildRequest {
  specPath: string;
  vars: Record<string, Json>;
  opts: BuildOptions;
  emit: (e: BuildEvent) => void;
}

/** Builds the spec; its report and spec_hash. The events end with build-done. */
export async function runBuild(request: BuildRequest): Promise<{ report: BuildReport; specHash: string }> {
  const { specPath, vars, opts, emit } = request;
  const rt = await loadBuildRuntime(specPath, vars, opts, (message) => emit({ type: "info", message }));
  let report;
  const ahead = loadingAhead(rt);
  try {
    report = await build(rt, opts, (e) => {
      emit(e);
      ahead(e);
    });
  } finally {
    await settleRemotes(); // the replies of a failed build reach the shared cache too
  }
  for (const message of remoteProvenance(report.stages)) emit({ type: "info", message });
  rememberParsedSpec(rt.spec, specPath, join(opts.project.cacheDir, "specs"));
  saveCodeMemo();
  const specHash = rt.spec.specHash;
  const metrics = report.results ? readMetrics(report.results) : null;
  if (metrics) sayCost(metrics, opts, emit);
  // What the result itself says of its provenance is said after every build, fresh or not.
  for (const message of metrics ? runNotices(metrics) : []) emit({ type: "notice", message });
  const summary = metrics ? summaryRows(metrics) : [];
  emit({ type: "build-done", specHash, results: report.results, summary, lockChanged: report.lockChanged });
  return { report, specHash };
}

/** The run's tokens and their cost at the registry's prices (docs/records.md, "Tokens and cost"). */
function sayCost(metrics: Record<string, Json>, opts: BuildOptions, emit: (e: BuildEvent) => void): void {
  const routes = commandRoutes(opts.registryFiles);
  const line = costLine(
    runCost(metrics, (name) => routes.get(name)),
    opts.budget ? opts.budget.spent : null,
  );
  if (line !== null) emit({ type: "info", message: line });
}
