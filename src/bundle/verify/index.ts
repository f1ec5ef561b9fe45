// medbench verify BUNDLE|DIR: check a published result from its bundle alone, in this order: the spec hash,
// the members and the key records, the recorded output hashes, the data pins (with --data-dir), then a
// replay of every stage that needs neither data nor a model, compared metric by metric and verdict by
// verdict. --live re-sends the requests. Each check is a module of this folder.
import { existsSync, mkdtempSync, rmSync, statSync } from "../../util/builtins.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkBundleDir, unpackBundle } from "../limits.js";
import { withheldOutputs } from "../private.js";
import { publishedOutputs, readManifest, resultNamer } from "./read.js";
import { checkSpec } from "./spec.js";
import { checkLocalSpec } from "./local-spec.js";
import { loadBundledTask, refuseTaskCode } from "./task.js";
import { checkMembers } from "./members.js";
import { checkRecords, replayIdentity } from "./records.js";
import { checkOutputs } from "./outputs.js";
import { checkData } from "./data.js";
import { checkReplay, replayNotRun } from "./replay.js";
import { checkPartial } from "./partial.js";
import { liveCheck, runLive } from "./live.js";
import type { Check, LiveReport, Replay, VerifyOptions, VerifyReport } from "./types.js";
import { UsageError } from "../../errors.js";

export type { Check, Difference, LiveReport, VerifyOptions, VerifyReport } from "./types.js";

function openBundle(path: string): { dir: string; cleanup: () => void } {
  if (!existsSync(path)) throw new UsageError(`${path} does not exist`);
  if (statSync(path).isDirectory()) return { dir: path, cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "medbench-verify-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function verifyBundle(path: string, options: VerifyOptions): Promise<VerifyReport> {
  const { dir, cleanup } = openBundle(path);
  const scratch = mkdtempSync(join(tmpdir(), "medbench-verify-scratch-"));
  try {
    // Sizes, member count, links and member paths are checked before a byte is written or read.
    if (dir !== path) await unpackBundle(path, dir);
    else checkBundleDir(dir);
    if (!existsSync(join(dir, "bundle.json")))
      throw new UsageError(`${path} is not a medbench bundle (no bundle.json)`);
    return await verifyDir(path, dir, { ...options, scratch });
  } finally {
    cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function verifyDir(label: string, dir: string, options: VerifyOptions): Promise<VerifyReport> {
  const manifest = readManifest(label, dir);
  refuseTaskCode(label, manifest, options);
  const published = publishedOutputs(dir, manifest);
  const resultName = resultNamer(manifest);
  const checks: Check[] = [];
  const { spec, check: specCheck } = checkSpec(label, dir, manifest, published);
  checks.push(specCheck);
  const local = checkLocalSpec(options.project.root, dir, manifest);
  if (local) checks.push(local);
  const loaded = await loadBundledTask(dir, manifest, spec, options);
  const task = loaded?.module ?? null;
  // A private release's bundle leaves out what its task withholds (src/bundle/private.ts).
  const withheld = task ? withheldOutputs(manifest.stages, task) : (manifest.withheld?.outputs ?? []);
  checks.push(checkMembers(dir, manifest, spec, withheld));
  const replay: Replay | null =
    spec && task ? { dir, spec, task, manifest, published, options, withheld } : null;
  if (replay) checks.push(await checkRecords(dir, manifest, replay.spec, replayIdentity(replay)));
  checks.push(checkOutputs(dir, manifest, published, withheld, resultName));
  checks.push(checkData(manifest, options.dataDir));
  const replayed = replay ? await checkReplay(replay, loaded?.user ?? null, resultName) : replayNotRun();
  checks.push(replayed.check);
  if (replayed.verdicts) checks.push(replayed.verdicts);
  const partial = checkPartial(published, manifest);
  if (partial) checks.push(partial);
  const live = replay && options.live ? await liveRun(replay) : null;
  if (live) checks.push(liveCheck(live));
  return {
    bundle: label,
    slug: manifest.slug,
    spec_hash: manifest.spec_hash,
    checks,
    differences: replayed.differences,
    code_differences: replayed.code_differences,
    live,
    ok: checks.every((check) => check.ok !== false),
  };
}

/** The live run, refused for a bundle that withholds the requests it would send. */
async function liveRun(replay: Replay): Promise<LiveReport> {
  if (replay.withheld.length)
    throw new UsageError(
      `--live re-sends the recorded requests, and this bundle withholds them ` +
        `(${replay.manifest.withheld?.why ?? "a private release"}): verify without --live`,
    );
  return runLive(replay);
}
