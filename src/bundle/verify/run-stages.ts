// Runs the spec's stages on bundled outputs: model and data stages come from the bundle (or, live, the
// model stages are sent again into their own cache namespace); everything else is recomputed here.
import { readFileSync, rmSync } from "../../util/builtins.js";
import { join } from "node:path";
import { planStages } from "../../graph/plan.js";
import { STAGE_KINDS } from "../../../stages/index.js";
import { openCache } from "../../runner/store/cache.js";
import { type InputView, type StageContext, type StageKind } from "../../contract/stage.js";
import { fileInputView } from "../../runner/execution/scope.js";
import { sha256Hex } from "../../hash/sha256.js";
import type { StageDecl } from "../../specfile/load.js";
import type { TaskModule } from "../../../tasks/task.js";
import { callsModel, outputPath, readsData } from "../layout.js";
import { replayOrRefuse } from "../replay-failure.js";
import { replayContext } from "./context.js";
import { failuresOf } from "./failures.js";
import type { LiveRun, Outputs, Recomputed, Replay } from "./types.js";
import { UsageError, StageError } from "../../errors.js";

type Hashes = Map<string, Record<string, string>>;
type StageRun = Awaited<ReturnType<StageKind["run"]>>;

/** The bundled members a replayed stage reads (outputs of the stages taken from the bundle, not
 *  replayed). */
function bundledInputs(decl: StageDecl, produced: Recomputed, published: Outputs) {
  const read = new Map<string, Buffer>();
  for (const ref of Object.values(decl.inputs)) {
    if (!("stage" in ref) || produced.ran.has(ref.stage)) continue;
    for (const [output, data] of published.get(ref.stage) ?? [])
      read.set(outputPath(ref.stage, output), data);
  }
  return read;
}

/** A stage of a private bundle that reads a withheld output, again as its kind can (replayWithheld). */
function replayWithheld(
  decl: StageDecl,
  kind: StageKind,
  task: TaskModule,
  produced: Outputs,
  published: Outputs,
): Map<string, Buffer> | null {
  if (!kind.replayWithheld) return null;
  const text = (outputs: Map<string, Buffer> | undefined) =>
    Object.fromEntries(
      [...(outputs ?? new Map<string, Buffer>())].map(([name, data]) => [name, data.toString("utf8")]),
    );
  const out = kind.replayWithheld({
    task,
    own: text(published.get(decl.name)),
    input: (name, output) => {
      const ref = decl.inputs[name];
      return ref && "stage" in ref ? produced.get(ref.stage)?.get(output)?.toString("utf8") : undefined;
    },
    params: decl.params,
  });
  return out ? new Map(Object.entries(out).map(([name, text]) => [name, Buffer.from(text)])) : null;
}

/** The withheld outputs a stage reads, and whether it makes one. */
function withheldUse(decl: StageDecl, kind: StageKind, withheld: readonly string[]) {
  const reads = Object.entries(decl.inputs).flatMap(([name, ref]) => {
    const wants = kind.inputs[name];
    if (!("stage" in ref) || !wants?.outputs) return [];
    return Object.keys(wants.outputs).flatMap((out) =>
      withheld.includes(`${ref.stage}/${out}`) ? [`${ref.stage}/${out}`] : [],
    );
  });
  return { reads, makes: withheld.some((path) => path.startsWith(`${decl.name}/`)) };
}

/** What reads a withheld output (or makes one) cannot run here; a score is taken again from its items.
 *  True when the stage was so rescored; otherwise it may be marked not replayed. */
function rescored(
  decl: StageDecl,
  kind: StageKind,
  replay: Replay,
  produced: Recomputed,
  hashes: Hashes,
): boolean {
  const { reads, makes } = withheldUse(decl, kind, replay.withheld);
  if (readsData(decl.kind) || callsModel(decl.kind) || !(reads.length || makes)) return false;
  const again = replayWithheld(decl, kind, replay.task, produced, replay.published);
  if (again) {
    produced.set(decl.name, again);
    hashes.set(decl.name, Object.fromEntries([...again].map(([name, data]) => [name, sha256Hex(data)])));
    produced.ran.add(decl.name);
    produced.rescored.add(decl.name);
    return true;
  }
  produced.notReplayed.set(
    decl.name,
    makes
      ? "its outputs are withheld from the bundle (a private release)"
      : `it reads ${reads.join(", ")}, withheld from the bundle (a private release)`,
  );
  return false;
}

/** A file input: the bundled copy of a template or schema. */
function fileInput(dir: string, file: string): InputView {
  return fileInputView(join(dir, "spec", file));
}

/** A stage input: the outputs the upstream stage produced (or took from the bundle) here. */
function stageInput(decl: StageDecl, stage: string, produced: Outputs, hashes: Hashes): InputView {
  const get = (out?: string) => {
    const outputs = produced.get(stage) ?? new Map<string, Buffer>();
    const key = out ?? [...outputs.keys()][0];
    const data = key === undefined ? undefined : outputs.get(key);
    if (!data)
      throw new UsageError(`the bundle has no output ${stage}/${out ?? ""}, which stage ${decl.name} reads`);
    return data;
  };
  return {
    get hashes() {
      return hashes.get(stage) ?? {};
    },
    read: get,
    text: (out) => get(out).toString("utf8"),
    path: () => "",
  };
}

function stageInputs(decl: StageDecl, dir: string, produced: Outputs, hashes: Hashes) {
  const inputs: Record<string, InputView> = {};
  for (const [name, ref] of Object.entries(decl.inputs))
    inputs[name] = "file" in ref ? fileInput(dir, ref.file) : stageInput(decl, ref.stage, produced, hashes);
  return inputs;
}

/** Runs one stage: a live model stage sends its requests (null when its route stopped: the run ends);
 *  any other replays, refused naming the bundled members it read when it stops on them. */
async function runOne(
  decl: StageDecl,
  kind: StageKind,
  context: StageContext,
  live: LiveRun | false,
  bundled: () => Map<string, Buffer>,
): Promise<StageRun | null> {
  if (!(live && callsModel(decl.kind))) return replayOrRefuse(decl.name, bundled(), () => kind.run(context));
  context.emit({ type: "info", stage: decl.name, message: "live: sending the recorded requests again" });
  let out: StageRun;
  try {
    out = await kind.run(context);
  } catch (e) {
    if (!(e instanceof StageError)) throw e;
    // A route that stopped (a dead server, a refused key): the run is incomplete, not a bug.
    live.stopped = `stage ${decl.name}: ${e.message}${e.fix ? ` (${e.fix})` : ""}`;
    return null;
  }
  live.failures.push(failuresOf(decl.name, kind, out, live.items));
  return out;
}

/** A stage's outputs as bytes (a file output read, then removed) and their hashes. */
function keep(name: string, out: StageRun, produced: Recomputed, hashes: Hashes): void {
  const outputs = new Map<string, Buffer>();
  const hashed: Record<string, string> = {};
  for (const [output, value] of Object.entries(out)) {
    const data =
      typeof value === "string"
        ? Buffer.from(value)
        : value instanceof Uint8Array
          ? Buffer.from(value)
          : readFileSync(value.file);
    if (typeof value === "object" && "file" in value) rmSync(value.file, { force: true });
    outputs.set(output, data);
    hashed[output] = sha256Hex(data);
  }
  produced.set(name, outputs);
  hashes.set(name, hashed);
  produced.ran.add(name);
}

export async function runStages(replay: Replay, live: LiveRun | false): Promise<Recomputed> {
  const { dir, spec, manifest, published, options } = replay;
  const plan = planStages(spec, new Set(STAGE_KINDS.keys()));
  const produced: Recomputed = Object.assign(new Map() as Outputs, {
    ran: new Set<string>(),
    notReplayed: new Map<string, string>(),
    rescored: new Set<string>(),
  });
  const hashes: Hashes = new Map();
  // Live replies read through and write through the shared remote cache, as a build's do.
  const cache = openCache(options.project.cacheDir, options.env, (message) =>
    process.stderr.write(`warning: ${message}\n`),
  );
  for (const decl of plan.order) {
    const kind = STAGE_KINDS.get(decl.kind)!;
    if (rescored(decl, kind, replay, produced, hashes)) continue;
    const fromBundle =
      readsData(decl.kind) || (callsModel(decl.kind) && !live) || produced.notReplayed.has(decl.name);
    if (fromBundle) {
      produced.set(decl.name, published.get(decl.name) ?? new Map());
      hashes.set(decl.name, manifest.stages[decl.name]?.outputs ?? {});
      continue;
    }
    const inputs = stageInputs(decl, dir, produced, hashes);
    const context = replayContext(decl, replay, inputs, cache, live !== false);
    const out = await runOne(decl, kind, context, live, () => bundledInputs(decl, produced, published));
    if (out === null) break;
    keep(decl.name, out, produced, hashes);
  }
  return produced;
}
