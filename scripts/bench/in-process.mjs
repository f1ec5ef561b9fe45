// A built checkout's stages run in medbench's process, as before isolation: a preload (`node --require`)
// makes its executor's runsIsolated answer false before its CLI loads. The baseline of
// scripts/bench/isolation.mjs and `revisions.mjs --in-process`.
//   const preload = await inProcessPreload(checkoutDir, workDir); // then: node --require PRELOAD bin …
import { fs, path } from "zx";

/** Writes the preload for the checkout into `work` and returns its path. */
export async function inProcessPreload(checkout, work) {
  const stageCode = path.join(checkout, "dist/src/runner/keys/stage-code.js");
  if (!(await fs.pathExists(stageCode)))
    throw new Error(`${checkout} has no ${stageCode}: nothing isolated`);
  const preload = path.join(work, "in-process.cjs");
  await fs.writeFile(preload, `require(${JSON.stringify(stageCode)}).runsIsolated = () => false;\n`);
  return preload;
}
