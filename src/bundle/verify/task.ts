// The bundle's task: one of medbench's, or one of the author's repository whose sources the bundle carries
// (compiled in this project's cache, and only when the user said its code may run here).
import { join } from "node:path";
import { loadTask } from "../../load/runtime.js";
import type { SpecFile } from "../../specfile/load.js";
import type { BundleManifest } from "../layout.js";
import type { VerifyOptions } from "./types.js";
import { UsageError } from "../../errors.js";

/** A hostile bundle reads nothing outside its temp dir, but its task's code, run, could: the user
 *  decides. */
export function refuseTaskCode(label: string, manifest: BundleManifest, options: VerifyOptions): void {
  const files = manifest.task_files;
  if (!files?.length || options.runTaskCode) return;
  throw new UsageError(
    `${label} carries the code of its task (${files.slice(0, 5).join(", ")}` +
      `${files.length > 5 ? ", …" : ""}), which the replay compiles and runs on this machine\n` +
      "  fix: read it (spec/tasks/ in the bundle), then run verify again with --run-task-code",
  );
}

/** The task the spec names, loaded (null without a spec). */
export async function loadBundledTask(
  dir: string,
  manifest: BundleManifest,
  spec: SpecFile | null,
  options: VerifyOptions,
): Promise<Awaited<ReturnType<typeof loadTask>> | null> {
  if (!spec) return null;
  if (!manifest.task_files?.length) return await loadTask(spec);
  // A task of the author's repository is loaded from its bundled sources, compiled in this project's cache.
  const bundledTask = { ...spec, path: join(dir, "spec", manifest.spec) };
  return await loadTask(bundledTask, join(options.project.cacheDir, "bundled-tasks"), (message) =>
    options.emit?.({ type: "info", message }),
  );
}
