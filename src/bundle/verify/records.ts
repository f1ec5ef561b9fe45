// The records check: every stage's key record is what the keyed walk gives it again from the bundled spec,
// its bundled files and the upstream outputs as recorded (its key the hash of that record). What no
// recomputation here can reach (the code hashes of the build, a model route's identity) is taken as
// recorded: it is covered by the stage key, and the key by the next stage's record and by the published
// spec_hash in the end.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { stageKey, type KeyRecord } from "../../runner/keys/keys.js";
import { rekeyRecorded } from "../../runner/execution/walk.js";
import { planStages } from "../../graph/plan.js";
import { Cache } from "../../runner/store/cache.js";
import type { SpecFile, StageDecl } from "../../specfile/load.js";
import { STAGE_KINDS } from "../../../stages/index.js";
import { jsonDiff, pointerWords } from "../../util/json.js";
import { callsModel, isData, readsData, type BundleManifest, type BundleStage } from "../layout.js";
import { replayContext } from "./context.js";
import { show } from "./members.js";
import type { Check, Replay } from "./types.js";

type Identity = NonNullable<Parameters<typeof rekeyRecorded>[3]>;

/** What a stage kind works out itself (its identity), recomputed here for the kinds that need neither the
 *  data nor a model; null for the others. */
export function replayIdentity(replay: Pick<Replay, "spec" | "task" | "manifest" | "options">): Identity {
  const cache = new Cache(replay.options.project.cacheDir);
  return async (decl) => {
    const kind = STAGE_KINDS.get(decl.kind);
    if (!kind?.identify || readsData(decl.kind) || callsModel(decl.kind)) return null;
    return { value: await kind.identify(replayContext(decl, replay, {}, cache, false)) };
  };
}

/** A file input's hash: the bundled copy's, or, missing (named by the members check), the recorded one. */
function bundledFileHash(dir: string, manifest: BundleManifest) {
  return async (decl: StageDecl, input: string, file: string) => {
    const path = join(dir, "spec", file);
    return existsSync(path)
      ? sha256Hex(readFileSync(path))
      : (manifest.stages[decl.name]?.record.inputs[input]?.file ?? "");
  };
}

/** What differs between one stage's record and the walk's record of it (`now`). */
function recordLines(manifest: BundleManifest, decl: StageDecl, now: KeyRecord): string[] {
  const lines: string[] = [];
  const stage = manifest.stages[decl.name];
  if (!stage) return lines; // named by the members check
  const record = stage.record;
  const differs = (what: string, recorded: unknown, want: unknown, from: string) => {
    for (const change of jsonDiff(recorded, want)) {
      const where = change.path === "/" ? "" : "." + pointerWords(change.path);
      lines.push(
        `stage ${decl.name}: ${what}${where} is ${show(change.from)} ` +
          `in its record, ${show(change.to)} ${from}`,
      );
    }
  };
  if (stageKey(record) !== stage.key)
    lines.push(`stage ${decl.name}: its key ${stage.key.slice(0, 12)}… is not the hash of its record`);
  if (record.kind !== decl.kind)
    lines.push(`stage ${decl.name}: its record is of kind ${show(record.kind)}`);
  differs("params", record.params, now.params, "from the spec and the bundle's variables");
  for (const change of jsonDiff(record.inputs, now.inputs)) {
    const [input] = pointerWords(change.path).split(".");
    const ref = input === undefined ? undefined : decl.inputs[input];
    lines.push(
      ref && "file" in ref
        ? `spec/${ref.file}: not the file stage ${decl.name} was built with ` +
            `(sha256 ${String(change.to).slice(0, 16)}…, recorded ${String(change.from).slice(0, 16)}…)`
        : `stage ${decl.name}: input ${pointerWords(change.path)} is ${show(change.from)} in its record, ` +
            `${show(change.to)} in the outputs the bundle records`,
    );
  }
  differs("identity", record.identity, now.identity, "recomputed here");
  if (isData(decl.kind)) lines.push(...pinLines(decl.name, stage));
  return lines;
}

/** A data stage's pins (in its identity) against the outputs it records. */
function pinLines(name: string, stage: BundleStage): string[] {
  const files = (stage.record.identity as { files?: Record<string, string | null> } | null)?.files ?? {};
  return Object.entries(files).flatMap(([path, pin]) =>
    pin !== null && stage.outputs[path] !== pin
      ? [`stage ${name}: ${path} is pinned ${pin.slice(0, 16)}…, recorded otherwise`]
      : [],
  );
}

/** Each stage's key record recomputed from the bundled spec (params), its bundled files and the recorded
 *  outputs of the stages it reads; `identity` recomputes what a kind works out itself (null: not here). */
export async function checkRecords(
  dir: string,
  manifest: BundleManifest,
  spec: SpecFile,
  identity: Identity,
): Promise<Check> {
  const plan = planStages(spec, new Set(STAGE_KINDS.keys()));
  const rekeyed = await rekeyRecorded(plan.order, manifest.stages, bundledFileHash(dir, manifest), identity);
  const lines: string[] = [];
  for (const decl of spec.stages) {
    const now = rekeyed.get(decl.name);
    if (now && !now.keyed) throw now.error;
    if (now?.keyed) lines.push(...recordLines(manifest, decl, now.keyed.record));
  }
  return {
    name: "records",
    ok: lines.length === 0,
    lines: lines.length
      ? lines
      : [`${spec.stages.length} stage keys recomputed from the spec, its files and the recorded outputs`],
  };
}
