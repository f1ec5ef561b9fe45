// medbench verify BUNDLE|DIR: check a published result from its bundle alone, in this order: the spec hash,
// the recorded output hashes, the data pins (with --data-dir), then a replay of every stage that needs
// neither data nor a model, compared metric by metric and verdict by verdict. --live re-sends the requests.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "../util/builtins.js";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseSourceDoc } from "../spec/document.js";
import { loadSpecFromSource, resultSource, type SpecFile } from "../spec/load.js";
import { metricEntries } from "../util/metrics.js";
import { DiagnosticError, UsageError, StageError } from "../errors.js";
import { planStages } from "../graph/plan.js";
import { STAGE_KINDS } from "../../stages/index.js";
import { loadTask } from "../cli/runtime.js";
import type { UserTask } from "../runner/user-task.js";
import { Cache, openCache } from "../runner/cache.js";
import { tempName } from "../runner/fsutil.js";
import { memoStore, replyFolder } from "../runner/memo.js";
import { repliesByWriter } from "../remote/store.js";
import { type InputView, type StageContext, type StageKind } from "../runner/stage.js";
import type { Emit } from "../runner/events.js";
import { carriesAnswers, readRecords, unanswered } from "../contract/records.js";
import { comparisonOf, pairVerdicts } from "../contract/compare.js";
import { sha256Hex } from "../hash/sha256.js";
import { jsonDiff, parseJsonLines, pointerWords, type Json } from "../util/json.js";
import { callsModel, isData, readsData, outputPath, type BundleManifest } from "./layout.js";
import { checkMembers, checkRecords, specFiles } from "./members.js";
import { BundleRefused, checkBundleDir, checkManifest, checkSpecFiles, unpackBundle } from "./limits.js";
import { withheldOutputs } from "./private.js";
import { replayOrRefuse } from "./replay-failure.js";
import type { StageDecl } from "../spec/load.js";
import type { Project } from "../runner/project.js";
import type { TaskModule } from "../../tasks/task.js";
import { stageCode } from "../runner/stage-code.js";
import { codeChanges } from "../runner/explain.js";
import { installRoot, medbenchVersion } from "../util/paths.js";

export interface Check {
  name: string;
  ok: boolean | null;
  lines: string[];
} // null: not checked
export interface Difference {
  what: string;
  published: unknown;
  recomputed: unknown;
}
export interface LiveReport {
  request_differences: { stage: string; path: string; recorded: unknown; sent: unknown }[];
  /** What the verdicts below compare: the task's `compare` declaration, or every boolean verdict in one
   *  group when it declares none (`declared: false`). The first verdict is the headline. */
  compare: {
    declared: boolean;
    by: string | null;
    leave_out: string | null;
    headline: string | null;
    verdicts: { name: string; label: string }[];
  };
  /** Per compared verdict and group (a value of `compare.by`, or "all"): published against live. */
  verdicts: {
    key: string;
    group: string;
    n: number;
    changed: number;
    to_true: number;
    to_false: number;
    items: string[];
  }[];
  /** Per model stage sent live: its requests that got no answer (left out of the verdicts above). */
  failures: { stage: string; failed: number; total: number; ids: string[] }[];
  /** Why the live run is not whole (requests that failed, a stage that stopped), or null when it is. */
  incomplete: string | null;
  /** Live replies taken from the shared remote instead of sent from here, by the machine that wrote them
   *  (its object metadata): anyone who can write the bucket could have planted one (docs/remote-cache.md). */
  from_remote: { remote: string; writers: { writer: string; replies: number; items: string[] }[] } | null;
  metrics: {
    metric: string;
    published: number | null;
    lo: number | null;
    hi: number | null;
    live: number | null;
    inside: boolean | null;
  }[];
}
export interface VerifyReport {
  bundle: string;
  slug: string;
  spec_hash: string;
  checks: Check[];
  differences: Difference[];
  /** Per replayed stage whose code differs: how this medbench's (which the replay ran) differs from the
   *  code its record in the bundle names (files as their sources, packages with both versions). */
  code_differences: { stage: string; changes: string[] }[];
  live: LiveReport | null;
  ok: boolean;
}

export interface VerifyOptions {
  project: Project;
  dataDir?: string;
  live: boolean;
  /** Whether a bundle's own task code (task_files) may be compiled and run here. */
  runTaskCode?: boolean;
  registryFiles: string[];
  env: Record<string, string | undefined>;
  /** Where the live run's progress and warnings go (the replay itself says nothing). */
  emit?: Emit;
  /** Set by verifyBundle: the folder a replayed stage writes its temp files in, removed at the end
   *  whatever happens (never the project's cache/tmp). */
  scratch?: string;
}

/** What a live run did beyond its outputs: failed requests per model stage, a stage that stopped. */
interface LiveRun {
  failures: LiveReport["failures"];
  stopped: string | null;
  /** Request key -> item id, for every live request of the model stages. */
  items: Map<string, string>;
}

type Outputs = Map<string, Map<string, Buffer>>;

function openBundle(path: string): { dir: string; cleanup: () => void } {
  if (!existsSync(path)) throw new UsageError(`${path} does not exist`);
  if (statSync(path).isDirectory()) return { dir: path, cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "medbench-verify-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function verifyBundle(path: string, o: VerifyOptions): Promise<VerifyReport> {
  const { dir, cleanup } = openBundle(path);
  const scratch = mkdtempSync(join(tmpdir(), "medbench-verify-scratch-"));
  try {
    // Sizes, member count, links and member paths are checked before a byte is written or read.
    if (dir !== path) await unpackBundle(path, dir);
    else checkBundleDir(dir);
    if (!existsSync(join(dir, "bundle.json")))
      throw new UsageError(`${path} is not a medbench bundle (no bundle.json)`);
    return await verifyDir(path, dir, { ...o, scratch });
  } finally {
    cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** bundle.json, parsed and checked (fields, paths, names) before any of it is used. */
function readManifest(label: string, dir: string): BundleManifest {
  const text = readFileSync(join(dir, "bundle.json")); // its size was checked with the members
  let b: unknown;
  try {
    b = JSON.parse(text.toString("utf8"));
  } catch (e) {
    throw new UsageError(
      `${label} is not a medbench bundle: bundle.json is not JSON (${(e as Error).message})`,
    );
  }
  checkManifest(label, b);
  return b as BundleManifest;
}

async function verifyDir(label: string, dir: string, o: VerifyOptions): Promise<VerifyReport> {
  const b = readManifest(label, dir);
  // A hostile bundle reads nothing outside its temp dir, but its task's code, run, could: the user decides.
  if (b.task_files?.length && !o.runTaskCode)
    throw new UsageError(
      `${label} carries the code of its task (${b.task_files.slice(0, 5).join(", ")}` +
        `${b.task_files.length > 5 ? ", …" : ""}), which the replay compiles and runs on this machine\n` +
        "  fix: read it (spec/tasks/ in the bundle), then run verify again with --run-task-code",
    );
  const checks: Check[] = [];
  const differences: Difference[] = [];
  const published = new Map<string, Map<string, Buffer>>();
  for (const [stage, st] of Object.entries(b.stages)) {
    if (isData(st.kind)) continue;
    const m = new Map<string, Buffer>();
    for (const output of Object.keys(st.outputs)) {
      const f = join(dir, outputPath(stage, output));
      if (existsSync(f)) m.set(output, readFileSync(f));
    }
    published.set(stage, m);
  }
  const resultName = (stage: string, output: string) =>
    Object.entries(b.results).find(([, v]) => v === `${stage}/${output}`)?.[0] ?? `${stage}/${output}`;

  // 1. The spec.
  let spec: SpecFile | null = null;
  const specCheck: Check = { name: "spec", ok: false, lines: [] };
  try {
    const src = parseSourceDoc(readFileSync(join(dir, "spec", b.spec)), b.spec);
    spec = loadSpecFromSource(
      src,
      Object.fromEntries(Object.entries(b.variables).filter(([, v]) => v !== undefined)) as Record<
        string,
        Json
      >,
    );
    checkSpecFiles(label, specFiles(spec));
    const metricsHash = (
      JSON.parse(
        published
          .get(resultSource(b.results["metrics.json"] ?? "").stage)
          ?.get("metrics")
          ?.toString("utf8") ?? "{}",
      ) as { spec_hash?: string }
    ).spec_hash;
    specCheck.ok =
      spec.specHash === b.spec_hash && (metricsHash === undefined || metricsHash === b.spec_hash);
    specCheck.lines.push(
      specCheck.ok
        ? `${b.spec} hashes to ${b.spec_hash}, the recorded spec_hash`
        : `${b.spec} hashes to ${spec.specHash}, but the result records spec_hash ` +
            `${metricsHash ?? b.spec_hash}: the spec was edited`,
    );
  } catch (e) {
    if (e instanceof BundleRefused) throw e;
    const msg =
      e instanceof DiagnosticError ? e.diagnostics.map((d) => d.message).join("; ") : (e as Error).message;
    specCheck.lines.push(`the bundled spec does not load: ${msg}`);
  }
  checks.push(specCheck);
  const local = localSpecDiff(o.project.root, dir, b);
  if (local) checks.push(local);
  // A task of the author's repository is loaded from its bundled sources, compiled in this project's cache.
  const bundledTask = spec && b.task_files?.length ? { ...spec, path: join(dir, "spec", b.spec) } : null;
  const loaded = bundledTask
    ? await loadTask(bundledTask, join(o.project.cacheDir, "bundled-tasks"), (message) =>
        o.emit?.({ type: "info", message }),
      )
    : spec
      ? await loadTask(spec)
      : null;
  const task: TaskModule | null = loaded?.module ?? null;
  // A private release's bundle leaves out what its task withholds (src/bundle/private.ts).
  const withheld = task ? withheldOutputs(b.stages, task) : (b.withheld?.outputs ?? []);
  checks.push(checkMembers(dir, b, spec, withheld));
  if (spec && task) {
    const s = spec;
    const t = task;
    const cache = new Cache(o.project.cacheDir);
    checks.push(
      await checkRecords(dir, b, s, async (decl: StageDecl) => {
        const kind = STAGE_KINDS.get(decl.kind);
        if (!kind?.identify || readsData(decl.kind) || callsModel(decl.kind)) return null;
        return {
          value: await kind.identify(replayContext(decl, { spec: s, task: t, b, o }, {}, cache, false)),
        };
      }),
    );
  }

  // 2. Every bundled output against the hash the build recorded.
  const outCheck: Check = { name: "outputs", ok: true, lines: [] };
  let count = 0;
  for (const [stage, m] of published) {
    for (const [output, expected] of Object.entries(b.stages[stage]!.outputs)) {
      if (withheld.includes(`${stage}/${output}`)) continue;
      const data = m.get(output);
      count++;
      if (!data) {
        outCheck.ok = false;
        outCheck.lines.push(`${resultName(stage, output)} is missing from the bundle`);
        continue;
      }
      const actual = sha256Hex(data);
      if (actual !== expected) {
        outCheck.ok = false;
        outCheck.lines.push(
          `${resultName(stage, output)} (${stage}/${output}) was changed after the build: ` +
            `sha256 ${actual.slice(0, 16)}…, recorded ${expected.slice(0, 16)}…`,
        );
      }
    }
  }
  for (const [file, from] of Object.entries(b.results)) {
    const { stage, output } = resultSource(from);
    const f = join(dir, "results", file);
    if (!existsSync(f)) continue;
    count++;
    const actual = sha256Hex(readFileSync(f));
    if (actual !== b.stages[stage]?.outputs[output]) {
      outCheck.ok = false;
      const recorded = String(b.stages[stage]?.outputs[output]).slice(0, 16);
      outCheck.lines.push(
        `results/${file} was changed after the build: ` +
          `sha256 ${actual.slice(0, 16)}…, recorded ${recorded}…`,
      );
    }
  }
  if (outCheck.ok) outCheck.lines.push(`${count} files match their recorded hashes`);
  checks.push(outCheck);

  // 3. The user's copy of the data, against the pins.
  const dataCheck: Check = { name: "data", ok: null, lines: [] };
  const download = Object.entries(b.stages).find(([, s]) => isData(s.kind));
  if (!o.dataDir)
    dataCheck.lines.push(
      "not checked: the replay needs no data (pass --data-dir to check a release against the pins)",
    );
  else if (download) {
    dataCheck.ok = true;
    for (const [file, pin] of Object.entries(download[1].outputs)) {
      const p = resolve(o.dataDir, file);
      const actual = existsSync(p) ? sha256Hex(readFileSync(p)) : null;
      if (actual !== pin) {
        dataCheck.ok = false;
        const found = actual ? `sha256 ${actual.slice(0, 16)}…, pinned ${pin.slice(0, 16)}…` : "missing";
        dataCheck.lines.push(`${file}: ${found}`);
      }
    }
    if (dataCheck.ok)
      dataCheck.lines.push(`${Object.keys(download[1].outputs).length} files of ${o.dataDir} match the pins`);
  }
  checks.push(dataCheck);

  // 4. Replay.
  const replayCheck: Check = { name: "replay", ok: false, lines: [] };
  const code_differences: VerifyReport["code_differences"] = [];
  let verdictsCheck: Check | null = null;
  let live: LiveReport | null = null;
  if (spec && task) {
    const replay: Replay = { dir, spec, task, b, published, o, withheld };
    const recomputed = await runStages(replay, false);
    const replayed = spec.stages.filter((s) => recomputed.has(s.name) && recomputed.ran.has(s.name));
    for (const s of replayed) {
      for (const [output, data] of recomputed.get(s.name) ?? []) {
        const pub = published.get(s.name)?.get(output);
        if (pub && pub.equals(data)) continue;
        differences.push(...describe(resultName(s.name, output), pub, data));
      }
    }
    replayCheck.ok = differences.length === 0;
    const noReplies = withheld.some(
      (w) => b.stages[w.split("/")[0]!] && callsModel(b.stages[w.split("/")[0]!]!.kind),
    );
    const from = !withheld.length
      ? "the bundled replies"
      : noReplies
        ? "the bundled items (a private release: its requests and replies are not bundled; " +
          "the verdicts stand as the items record them)"
        : "the bundled replies and items (a private release: its requests are not bundled)";
    const names = replayed.map((s) => s.name).join(", ");
    replayCheck.lines.push(
      replayCheck.ok
        ? `${names} recomputed from ${from}: every metric, interval and verdict identical`
        : `${names} recomputed from ${from}: ${differences.length} difference(s)`,
    );
    for (const [stage, why] of recomputed.notReplayed)
      replayCheck.lines.push(`${stage} not replayed: ${why}`);
    const taskInfo = { name: spec.task ?? "", module: task, user: loaded?.user ?? null };
    code_differences.push(...codeDifferences(replayed, b, taskInfo));
    const takenAsRecorded = spec.stages.filter(
      (s) => recomputed.notReplayed.has(s.name) || recomputed.rescored.has(s.name),
    );
    if (takenAsRecorded.length) verdictsCheck = takenAsIs(takenAsRecorded, b, taskInfo);
    replayCheck.lines.push(
      `replayed with this medbench's code (medbench ${medbenchVersion()}), ` +
        (code_differences.length
          ? "which differs from the code the bundle's records name, per replayed stage:"
          : "for every replayed stage the code the bundle's records name"),
      ...code_differences.map((d) => `  ${d.stage}: ${d.changes.join("; ")}`),
    );
  } else replayCheck.lines.push("not run: the spec does not load");
  checks.push(replayCheck);
  if (verdictsCheck) checks.push(verdictsCheck);
  const partial = partialRun(published, b);
  if (partial)
    checks.push({
      name: "partial",
      ok: false,
      lines: [
        `a partial run (${partial}): what it holds may replay exactly, but a partial run is never the ` +
          "published result; build without --limit and --subset, and export that",
      ],
    });
  if (o.live && spec && task && withheld.length)
    throw new UsageError(
      `--live re-sends the recorded requests, and this bundle withholds them ` +
        `(${b.withheld?.why ?? "a private release"}): verify without --live`,
    );
  if (o.live && spec && task) {
    const run: LiveRun = { failures: [], stopped: null, items: new Map() };
    live = compareLive(
      b,
      task,
      published,
      await runStages({ dir, spec, task, b, published, o, withheld }, run),
      run,
    );
    checks.push(liveCheck(live));
  }
  return {
    bundle: label,
    slug: b.slug,
    spec_hash: b.spec_hash,
    checks,
    differences,
    code_differences,
    live,
    ok: checks.every((c) => c.ok !== false),
  };
}

/** How the bundled result is partial (`--limit 2`, `--subset clean`), or null for a whole run: from its
 *  metrics.json (`partial`, `selection`), which the outputs check ties to the recorded hashes. */
function partialRun(published: Outputs, b: BundleManifest): string | null {
  const at = resultSource(b.results["metrics.json"] ?? "");
  let m: { partial?: unknown; selection?: { subset?: unknown; limit?: unknown } | null };
  try {
    m = JSON.parse(published.get(at.stage)?.get(at.output)?.toString("utf8") ?? "{}") as typeof m;
  } catch {
    return null; // not JSON: the outputs check names it
  }
  if (m?.partial !== true) return null;
  const how = [
    m.selection?.limit != null ? `--limit ${String(m.selection.limit)}` : "",
    m.selection?.subset != null ? `--subset ${JSON.stringify(m.selection.subset)}` : "",
  ].filter(Boolean);
  return how.join(" ") || "--limit or --subset";
}

/**
 * A private bundle's verdicts (and what else the replay takes from the bundle as it is, `stages`) cannot be
 * produced again here: the replies they were read from are withheld. They are worth what the code that
 * produced them is worth, so that code must be this medbench's: when it differs, the result is not
 * verifiable here (a failing check), whatever the replay of the rest says.
 */
function takenAsIs(
  stages: StageDecl[],
  b: BundleManifest,
  task: { name: string; module: TaskModule; user?: UserTask | null },
): Check {
  const names = stages.map((s) => s.name).join(", ");
  const differ = codeDifferences(stages, b, task);
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
      ...differ.map((d) => `  ${d.stage}: ${d.changes.join("; ")}`),
      `verify with the medbench the bundle was built with (medbench ${b.medbench}) and its task code`,
    ],
  };
}

/** Per replayed stage, what differs between the code the bundle's record names and this medbench's code
 *  for it (what the replay ran). Stages whose code is the same are left out. */
function codeDifferences(
  replayed: StageDecl[],
  b: BundleManifest,
  task: { name: string; module: TaskModule; user?: UserTask | null },
): VerifyReport["code_differences"] {
  const out: VerifyReport["code_differences"] = [];
  for (const decl of replayed) {
    const recorded = b.stages[decl.name]?.record;
    const kind = STAGE_KINDS.get(decl.kind);
    if (!recorded || !kind) continue;
    const now = stageCode(installRoot(), kind, decl.params as Json, task);
    const changes = codeChanges(recorded.code, now.code);
    const packages = new Set([...Object.keys(recorded.packages ?? {}), ...Object.keys(now.packages)]);
    for (const p of [...packages].sort())
      if (recorded.packages?.[p] !== now.packages[p])
        changes.push(`package ${p} ${recorded.packages?.[p] ?? "(none)"} -> ${now.packages[p] ?? "(none)"}`);
    if (changes.length) out.push({ stage: decl.name, changes });
  }
  return out;
}

/** What a replay runs from: the unpacked bundle, its spec and task, its outputs, what it withholds. */
interface Replay {
  dir: string;
  spec: SpecFile;
  task: TaskModule;
  b: BundleManifest;
  published: Outputs;
  o: VerifyOptions;
  withheld: readonly string[];
}

/** Runs the spec's stages on bundled outputs: model and data stages come from the bundle (or, live, the
 *  model stages are sent again into their own cache namespace); everything else is recomputed here. */
async function runStages(
  r: Replay,
  live: LiveRun | false,
): Promise<Outputs & { ran: Set<string>; notReplayed: Map<string, string>; rescored: Set<string> }> {
  const { dir, spec, task, b, published, o, withheld } = r;
  const plan = planStages(spec, new Set(STAGE_KINDS.keys()));
  const produced = Object.assign(new Map() as Outputs, {
    ran: new Set<string>(),
    notReplayed: new Map<string, string>(),
    // Replayed from their own bundled outputs (a score from its items): what those hold is taken as it is.
    rescored: new Set<string>(),
  });
  const hashes = new Map<string, Record<string, string>>();
  // Live replies read through and write through the shared remote cache, as a build's do.
  const cache = openCache(o.project.cacheDir, o.env, (m) => process.stderr.write(`warning: ${m}\n`));
  for (const decl of plan.order) {
    const kind = STAGE_KINDS.get(decl.kind)!;
    // What reads a withheld output (or makes one) cannot run here; a score is taken again from its items.
    const reads = Object.entries(decl.inputs).flatMap(([name, ref]) => {
      const wants = kind.inputs[name];
      if (!("stage" in ref) || !wants?.outputs) return [];
      return Object.keys(wants.outputs).flatMap((out) =>
        withheld.includes(`${ref.stage}/${out}`) ? [`${ref.stage}/${out}`] : [],
      );
    });
    const makes = withheld.some((w) => w.startsWith(`${decl.name}/`));
    if (!readsData(decl.kind) && !callsModel(decl.kind) && (reads.length || makes)) {
      const again = replayWithheld(decl, kind, task, produced, published);
      if (again) {
        produced.set(decl.name, again);
        hashes.set(decl.name, Object.fromEntries([...again].map(([k, v]) => [k, sha256Hex(v)])));
        produced.ran.add(decl.name);
        produced.rescored.add(decl.name);
        continue;
      }
      produced.notReplayed.set(
        decl.name,
        makes
          ? "its outputs are withheld from the bundle (a private release)"
          : `it reads ${reads.join(", ")}, withheld from the bundle (a private release)`,
      );
    }
    const fromBundle =
      readsData(decl.kind) || (callsModel(decl.kind) && !live) || produced.notReplayed.has(decl.name);
    if (fromBundle) {
      produced.set(decl.name, published.get(decl.name) ?? new Map());
      hashes.set(decl.name, b.stages[decl.name]?.outputs ?? {});
      continue;
    }
    const inputs: Record<string, InputView> = {};
    for (const [name, ref] of Object.entries(decl.inputs)) {
      if ("file" in ref) {
        const file = join(dir, "spec", ref.file); // the bundled copy of a template or schema
        inputs[name] = {
          hashes: {},
          read: () => readFileSync(file),
          text: () => readFileSync(file, "utf8"),
          path: () => file,
        };
        continue;
      }
      const get = (out?: string) => {
        const m = produced.get(ref.stage) ?? new Map<string, Buffer>();
        const key = out ?? [...m.keys()][0];
        const v = key === undefined ? undefined : m.get(key);
        if (!v)
          throw new UsageError(
            `the bundle has no output ${ref.stage}/${out ?? ""}, which stage ${decl.name} reads`,
          );
        return v;
      };
      inputs[name] = {
        get hashes() {
          return hashes.get(ref.stage) ?? {};
        },
        read: get,
        text: (out) => get(out).toString("utf8"),
        path: () => "",
      };
    }
    const ctx = replayContext(decl, r, inputs, cache, live !== false);
    let out: Awaited<ReturnType<typeof kind.run>>;
    if (live && callsModel(decl.kind)) {
      ctx.emit({ type: "info", stage: decl.name, message: "live: sending the recorded requests again" });
      try {
        out = await kind.run(ctx);
      } catch (e) {
        if (!(e instanceof StageError)) throw e;
        // A route that stopped (a dead server, a refused key): the run is incomplete, not a bug.
        live.stopped = `stage ${decl.name}: ${e.message}${e.fix ? ` (${e.fix})` : ""}`;
        break;
      }
      live.failures.push(failuresOf(decl.name, kind, out, live.items));
    } else
      out = await replayOrRefuse(decl.name, bundledInputs(decl, produced, published), () => kind.run(ctx));
    const m = new Map<string, Buffer>();
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(out)) {
      const buf =
        typeof v === "string"
          ? Buffer.from(v)
          : v instanceof Uint8Array
            ? Buffer.from(v)
            : readFileSync(v.file);
      if (typeof v === "object" && "file" in v) rmSync(v.file, { force: true });
      m.set(k, buf);
      h[k] = sha256Hex(buf);
    }
    produced.set(decl.name, m);
    hashes.set(decl.name, h);
    produced.ran.add(decl.name);
  }
  return produced;
}

/** The bundled members a replayed stage reads (outputs of the stages taken from the bundle, not replayed). */
function bundledInputs(decl: StageDecl, produced: Outputs & { ran: Set<string> }, published: Outputs) {
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
  const text = (m: Map<string, Buffer> | undefined) =>
    Object.fromEntries([...(m ?? new Map<string, Buffer>())].map(([k, v]) => [k, v.toString("utf8")]));
  const out = kind.replayWithheld({
    task,
    own: text(published.get(decl.name)),
    input: (name, output) => {
      const ref = decl.inputs[name];
      return ref && "stage" in ref ? produced.get(ref.stage)?.get(output)?.toString("utf8") : undefined;
    },
    params: decl.params,
  });
  return out ? new Map(Object.entries(out).map(([k, v]) => [k, Buffer.from(v)])) : null;
}

/** The context a replayed stage runs in: bundled inputs, no pins, no temp files, live replies kept apart. */
function replayContext(
  decl: StageDecl,
  r: Pick<Replay, "spec" | "task" | "b" | "o">,
  inputs: Record<string, InputView>,
  cache: Cache,
  live: boolean,
): StageContext {
  const { spec, task, b, o } = r;
  return {
    stage: decl.name,
    params: decl.params as Json,
    inputs,
    task,
    build: {
      slug: spec.slug,
      version: spec.version,
      specHash: spec.specHash,
      medbench: b.medbench,
      recipe: b.stages[decl.name]?.record.recipe ?? 1,
      variables: spec.variables,
    },
    options: {
      projectRoot: o.project.root,
      trustChanged: false,
      refresh: false,
      env: o.env,
      registryFiles: o.registryFiles,
      replyNamespace: "live",
    },
    pins: { recorded: () => undefined, record: () => {} },
    memo: memoStore(cache),
    // A stage that writes its output as it goes (a RecordsWriter) writes it here; it is read back at once.
    tempPath: () => tempName(o.scratch ?? cache.tmp),
    hashFile: async () => {
      throw new Error("replayed stages hash no files");
    },
    emit: live && o.emit ? o.emit : () => {},
  };
}

/** The requests of a live model (or judge) stage that got no answer: replies with an error, judge rows
 *  without a text. */
function failuresOf(
  stage: string,
  kind: StageKind | undefined,
  out: Record<string, unknown>,
  items?: Map<string, string>,
): LiveReport["failures"][number] {
  const text = (v: unknown) =>
    typeof v === "string"
      ? v
      : v instanceof Uint8Array
        ? Buffer.from(v).toString("utf8")
        : readFileSync((v as { file: string }).file, "utf8");
  // The outputs whose record type carries model answers, as the stage kind declares them.
  const declared = kind && kind.outputs !== "release" ? Object.entries(kind.outputs) : [];
  const rows = declared.flatMap(([name, type]) =>
    out[name] === undefined || !carriesAnswers(type)
      ? []
      : readRecords(type, text(out[name])).map((r) => {
          const key = (r as { request_sha256?: unknown }).request_sha256;
          if (items && typeof key === "string") items.set(key, r.id);
          return { id: r.id, failed: unanswered(type, r) };
        }),
  );
  const ids = [...new Set(rows.filter((r) => r.failed).map((r) => r.id))].sort();
  return { stage, failed: rows.filter((r) => r.failed).length, total: rows.length, ids };
}

/** The live run as a check: incomplete fails verification (a result not re-sent whole is not re-checked). */
function liveCheck(live: LiveReport): Check {
  const sent = live.failures.map((f) => `${f.stage}: ${f.total - f.failed} of ${f.total} requests answered`);
  if (!live.incomplete) return { name: "live", ok: true, lines: [sent.join("; ") || "no model stage"] };
  return {
    name: "live",
    ok: false,
    lines: [
      `incomplete: ${live.incomplete}`,
      ...sent,
      "the failed requests are no verdicts (left out of the comparison below); run verify --live again: " +
        "it sends only the requests without an answer",
    ],
  };
}

type MetricsFile = {
  metrics: Record<
    string,
    { value?: number | null; lo?: number | null; hi?: number | null; ci_method?: string } | Json
  >;
  paired?: Record<string, Record<string, Json>>;
};
type Item = { id: string; meta: Record<string, Json>; verdicts: Record<string, Json> };

function describe(name: string, pub: Buffer | undefined, got: Buffer): Difference[] {
  if (!pub) return [{ what: `${name}: not in the bundle`, published: null, recomputed: "(present)" }];
  if (name.endsWith("metrics.json")) {
    const a = JSON.parse(pub.toString("utf8")) as Json,
      c = JSON.parse(got.toString("utf8")) as Json;
    return jsonDiff(a, c).map((d) => ({
      what: `${name} ${pointerWords(d.path)}`,
      published: d.from,
      recomputed: d.to,
    }));
  }
  if (name.endsWith(".jsonl") && pub.toString("utf8").includes('"verdicts"')) {
    const a = new Map(parseJsonLines<Item>(pub.toString("utf8")).map((i) => [i.id, i]));
    const out: Difference[] = [];
    for (const i of parseJsonLines<Item>(got.toString("utf8"))) {
      const p = a.get(i.id);
      if (!p) {
        out.push({ what: `${name} ${i.id}`, published: null, recomputed: i.verdicts });
        continue;
      }
      for (const d of jsonDiff(p as unknown as Json, i as unknown as Json))
        out.push({ what: `${name} ${i.id} ${pointerWords(d.path)}`, published: d.from, recomputed: d.to });
      a.delete(i.id);
    }
    for (const id of a.keys()) out.push({ what: `${name} ${id}`, published: "(present)", recomputed: null });
    return out;
  }
  return [
    {
      what: `${name}: bytes differ`,
      published: sha256Hex(pub).slice(0, 16),
      recomputed: sha256Hex(got).slice(0, 16),
    },
  ];
}

function compareLive(
  b: BundleManifest,
  task: TaskModule,
  published: Outputs,
  live: Outputs,
  run: LiveRun,
): LiveReport {
  const failed = run.failures.reduce((n, f) => n + f.failed, 0);
  const total = run.failures.reduce((n, f) => n + f.total, 0);
  const incomplete =
    run.stopped ?? (failed > 0 ? `${failed} of ${total} live requests failed (no answer)` : null);
  // A failure is not a verdict: requests without an answer, live or in the published run, are left out.
  const failedIds = new Set(run.failures.flatMap((f) => f.ids));
  for (const [stage, st] of Object.entries(b.stages))
    if (callsModel(st.kind))
      for (const id of failuresOf(
        stage,
        STAGE_KINDS.get(st.kind),
        Object.fromEntries(published.get(stage) ?? []),
      ).ids)
        failedIds.add(id);
  // A bundle names its results' stages (the member check refused one that does not).
  const items = resultSource(b.results["items.jsonl"] ?? "");
  const metricsAt = resultSource(b.results["metrics.json"] ?? "");
  const pubItems = parseJsonLines<Item>(
    published.get(items.stage)?.get(items.output)?.toString("utf8") ?? "",
  );
  const liveItems = parseJsonLines<Item>(live.get(items.stage)?.get(items.output)?.toString("utf8") ?? "");
  // The verdicts and groups the task declares for a paired comparison (as `medbench compare` reads them).
  const { decl, declared } = comparisonOf(task.compare, pubItems);
  const verdicts = pairVerdicts(pubItems, liveItems, decl, failedIds).rows.map(
    ({ verdict, group, pairs }) => {
      const g = { key: verdict, group, n: 0, changed: 0, to_true: 0, to_false: 0, items: [] as string[] };
      for (const { id, a: pv, b: v } of pairs) {
        if (typeof v !== "boolean" || typeof pv !== "boolean") continue; // no verdict on one side
        g.n++;
        if (v === pv) continue;
        g.changed++;
        if (v) g.to_true++;
        else g.to_false++;
        g.items.push(id);
      }
      return g;
    },
  );
  const compare: LiveReport["compare"] = {
    declared,
    by: decl.by ?? null,
    leave_out: decl.leaveOut ?? null,
    headline: decl.verdicts[0]?.name ?? null,
    verdicts: decl.verdicts,
  };
  const pm = JSON.parse(
    published.get(metricsAt.stage)?.get(metricsAt.output)?.toString("utf8") ?? "{}",
  ) as MetricsFile;
  const lm = JSON.parse(
    live.get(metricsAt.stage)?.get(metricsAt.output)?.toString("utf8") ?? "{}",
  ) as MetricsFile;
  const metrics: LiveReport["metrics"] = [];
  for (const [name, p] of metricEntries(pm)) {
    const l = (lm.metrics?.[name] ?? {}) as { value?: number | null };
    const live = l.value ?? null;
    metrics.push({
      metric: name,
      published: p.value ?? null,
      lo: p.lo ?? null,
      hi: p.hi ?? null,
      live,
      inside: live === null || p.lo == null || p.hi == null ? null : live >= p.lo && live <= p.hi,
    });
  }
  // The live requests should carry the recorded fields; a route configured otherwise here changes them.
  const request_differences: LiveReport["request_differences"] = [];
  for (const [stage, st] of Object.entries(b.stages)) {
    if (!callsModel(st.kind)) continue;
    const pa = JSON.parse(published.get(stage)?.get("audit")?.toString("utf8") ?? "null") as Json;
    const la = JSON.parse(live.get(stage)?.get("audit")?.toString("utf8") ?? "null") as Json;
    // A model stage's audit keeps what it sent under `request`; a judge's audit is what it sent.
    const req = (a: Json) =>
      a !== null && typeof a === "object" && !Array.isArray(a) && "request" in a ? (a.request ?? null) : a;
    for (const d of jsonDiff(req(pa), req(la))) {
      if (!/thinking_audit|api_errors|truncated|response_format|incomplete|\/n$/.test(d.path))
        request_differences.push({ stage, path: d.path, recorded: d.from, sent: d.to });
    }
  }
  const failures = run.failures;
  const from_remote = remoteReplies(run.items);
  if (run.stopped)
    return { request_differences, compare, verdicts: [], failures, incomplete, metrics: [], from_remote };
  return { request_differences, compare, verdicts, failures, incomplete, metrics, from_remote };
}

/** The live replies read from the shared remote in this run, by writer, with the items they answer. */
function remoteReplies(items: Map<string, string>): LiveReport["from_remote"] {
  const got = repliesByWriter(replyFolder("live"));
  if (!got) return null;
  const writers = [...got.writers]
    .map(([writer, keys]) => ({
      writer,
      replies: keys.length,
      items: [...new Set(keys.map((k) => items.get(k) ?? `request ${k.slice(0, 12)}…`))].sort(),
    }))
    .sort((a, b) => (a.writer < b.writer ? -1 : 1));
  return { remote: got.remote, writers };
}

/**
 * When this project has a spec of the same task, whether it differs from the bundled one (the field diff).
 */
function localSpecDiff(root: string, dir: string, b: BundleManifest): Check | null {
  const specs = join(root, "specs");
  if (!existsSync(specs)) return null;
  const bundled = parseSourceDoc(readFileSync(join(dir, "spec", b.spec)), b.spec).value as Json;
  for (const f of readdirSync(specs)
    .filter((n) => /\.ya?ml$/.test(n))
    .sort()) {
    let value: Json;
    try {
      value = parseSourceDoc(readFileSync(join(specs, f)), `specs/${f}`).value as Json;
    } catch {
      continue;
    }
    if ((value as { slug?: string } | null)?.slug !== b.slug) continue;
    const diffs = jsonDiff(bundled, value);
    // One version of a task has one published spec: the same version with another `spec` member means one of
    // the two is not the published one (a bundle whose spec was edited, its hashes rewritten to match).
    const at = (v: Json, k: string) => (v as Record<string, Json> | null)?.[k];
    const sameVersion = at(bundled, "version") === at(value, "version");
    const published = sameVersion && jsonDiff(at(bundled, "spec"), at(value, "spec")).length > 0;
    return {
      name: "local spec",
      ok: diffs.length === 0 ? true : published ? false : null,
      lines:
        diffs.length === 0
          ? [`specs/${f} is the same as the bundled spec`]
          : [
              published
                ? `specs/${f} has another published spec (member \`spec\`) for the same version ` +
                  `${String(at(value, "version"))}: the bundled spec is not the one this project has`
                : `specs/${f} differs from the bundled spec (information; the bundled one is verified):`,
              ...diffs.map((d) => `  ${d.path}: ${JSON.stringify(d.from)} -> ${JSON.stringify(d.to)}`),
            ],
    };
  }
  return null;
}
