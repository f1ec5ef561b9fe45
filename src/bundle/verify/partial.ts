// The partial check: a bundle of a partial run (`--limit`, `--subset`) is never the published result.
import { resultSource } from "../../specfile/load.js";
import type { BundleManifest } from "../layout.js";
import type { Check, Outputs } from "./types.js";

/** How the bundled result is partial (`--limit 2`, `--subset clean`), or null for a whole run: from its
 *  metrics.json (`partial`, `selection`), which the outputs check ties to the recorded hashes. */
export function partialRun(published: Outputs, manifest: BundleManifest): string | null {
  const at = resultSource(manifest.results["metrics.json"] ?? "");
  let metrics: { partial?: unknown; selection?: { subset?: unknown; limit?: unknown } | null };
  try {
    metrics = JSON.parse(
      published.get(at.stage)?.get(at.output)?.toString("utf8") ?? "{}",
    ) as typeof metrics;
  } catch {
    return null; // not JSON: the outputs check names it
  }
  if (metrics?.partial !== true) return null;
  const how = [
    metrics.selection?.limit != null ? `--limit ${String(metrics.selection.limit)}` : "",
    metrics.selection?.subset != null ? `--subset ${JSON.stringify(metrics.selection.subset)}` : "",
  ].filter(Boolean);
  return how.join(" ") || "--limit or --subset";
}

/** The failing check of a partial run, or null for a whole one. */
export function checkPartial(published: Outputs, manifest: BundleManifest): Check | null {
  const partial = partialRun(published, manifest);
  if (!partial) return null;
  return {
    name: "partial",
    ok: false,
    lines: [
      `a partial run (${partial}): what it holds may replay exactly, but a partial run is never the ` +
        "published result; build without --limit and --subset, and export that",
    ],
  };
}
