// medbench export RESULT -o FILE.tar.gz: the result, its spec and inputs' hashes, every stage's record and
// output (but the data), packed deterministically.
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  writeFileSync,
  rmSync,
  existsSync,
  readdirSync,
} from "../util/builtins.js";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { filesUnder } from "../runner/code/code.js";
import { create, type Pack } from "tar";
import { Cache } from "../runner/store/cache.js";
import { specFileOf, specFilesRoot, type Project } from "../runner/project/project.js";
import type { BuildOptions, Runtime } from "../runner/execution/executor.js";
import type { StageOutcome } from "../runner/store/outcome.js";
import { newScope, projectSource } from "../runner/execution/scope.js";
import { rekeyRecorded } from "../runner/execution/walk.js";
import { loadRuntime } from "../load/runtime.js";
import { loadSpec, resultSource } from "../specfile/load.js";
import { UsageError } from "../errors.js";
import { sha256Hex } from "../hash/sha256.js";
import { jsonDiff, pointerWords, stableJson, type Json } from "../util/json.js";
import { bundlePins, lockEntry, specFiles } from "./members.js";
import { BUNDLE_FORMAT, isData, outputPath, type BundleManifest } from "./layout.js";
import { withheldField } from "./private.js";

/** What a results folder's build.json records of its build. */
interface Built {
  spec: string;
  spec_hash: string;
  variables: Record<string, Json>;
  stages: Record<string, StageOutcome>;
}

/** Packs the result into `outFile`, or onto stdout when it is `-` (the caller checked the place). */
export async function exportResult(resultDir: string, outFile: string, opts: BuildOptions): Promise<string> {
  const buildFile = join(resultDir, "build.json");
  if (!existsSync(buildFile))
    throw new UsageError(`${resultDir} is not a result directory of a medbench build (no build.json)`);
  const built = JSON.parse(readFileSync(buildFile, "utf8")) as Built;
  const specFile = specFileOf(opts.project, built.spec);
  const rt = await resultRuntime(built, specFile);
  // Refused before its stages are read: such a run's build.json records no key (results.ts).
  if (rt.task.module.privateRelease) refusePartial(resultDir, rt.task.module.privateRelease.why);
  const cache = new Cache(opts.project.cacheDir);
  const stages = await recordedStages(built, cache);
  await describesItsBuild(rt, opts, stages, buildFile);
  producedBy(rt, resultDir, stages);
  // A private release's bundle leaves out the outputs that carry its text; no results file may be one.
  const private_ = withheldField(stages, rt.task.module);
  const withheld = new Set(private_.withheld?.outputs ?? []);
  for (const [file, from] of Object.entries(rt.spec.results?.files ?? {}))
    if (withheld.has(from))
      throw new UsageError(
        `results file ${file} is ${from}, which this task withholds from bundles ` +
          `(${private_.withheld!.why}): drop it from results.files`,
      );
  const staging = mkdtempSync(join(tmpdir(), "medbench-export-"));
  try {
    const put = (rel: string, data: string | Buffer) => {
      mkdirSync(dirname(join(staging, rel)), { recursive: true });
      writeFileSync(join(staging, rel), data);
    };
    const files = specFiles(rt.spec);
    const taskFiles = putSpecFiles(put, { rt, file: specFile, path: built.spec, files }, opts.project);
    putStages(put, stages, withheld, cache);
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      slug: rt.spec.slug,
      version: rt.spec.version,
      spec_hash: rt.spec.specHash,
      spec: built.spec,
      files,
      ...(taskFiles.length ? { task_files: taskFiles } : {}),
      variables: built.variables,
      medbench: rt.build.medbench,
      results: rt.spec.results?.files ?? {},
      pins: bundlePins(stages),
      stages,
      ...private_,
    };
    put("bundle.json", stableJson(manifest));
    // For people: the result files under their usual names, and the lock entry (checked like the outputs).
    for (const [file, from] of Object.entries(manifest.results)) {
      const { stage, output } = resultSource(from);
      put(`results/${file}`, cache.read(stages[stage]!.outputs[output]!));
    }
    put("lock.json", lockEntry(manifest));
    await pack(staging, outFile);
    return outFile;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The runtime of the spec the result names, with the variables it was built with; its spec unchanged. */
async function resultRuntime(built: Built, specFile: string): Promise<Runtime> {
  const declared = loadSpec(specFile).variables;
  const rt = await loadRuntime(
    specFile,
    Object.fromEntries(
      Object.entries(built.variables).filter(([name, value]) => name in declared && value !== null),
    ),
  );
  if (rt.spec.specHash !== built.spec_hash)
    throw new UsageError(
      `${built.spec} has changed since this result was built ` +
        `(spec_hash ${rt.spec.specHash.slice(0, 12)}…, the result's ${built.spec_hash.slice(0, 12)}…)`,
    );
  return rt;
}

/** Every stage build.json records, with its key record from the cache's manifest; each output still held. */
async function recordedStages(built: Built, cache: Cache): Promise<BundleManifest["stages"]> {
  const stages: BundleManifest["stages"] = {};
  for (const [name, recorded] of Object.entries(built.stages)) {
    const manifest = cache.readManifest(recorded.key);
    if (!manifest)
      throw new UsageError(
        `the cache no longer holds stage ${name} of this result (key ${recorded.key.slice(0, 12)}…); ` +
          "rebuild it first",
      );
    for (const [output, hash] of Object.entries(manifest.outputs)) {
      if (!isData(recorded.kind) && !(await cache.verify(hash)))
        throw new UsageError(`the cache no longer holds ${name}/${output}; rebuild first`);
    }
    const { kind, key } = recorded;
    stages[name] = { kind, key, outputs: manifest.outputs, record: manifest.record };
  }
  return stages;
}

/** build.json must name the build its stages record: the keyed walk keys each stage again from the spec (its
 *  variables give the params) and the project's files, which must be what the stage was built with. */
async function describesItsBuild(
  rt: Runtime,
  opts: BuildOptions,
  stages: BundleManifest["stages"],
  buildFile: string,
): Promise<void> {
  const { fileHash } = projectSource(newScope(rt, opts, new Cache(opts.project.cacheDir), undefined));
  const rekeyed = await rekeyRecorded(rt.plan.order, stages, fileHash);
  for (const decl of rt.plan.order) {
    const stage = stages[decl.name];
    const now = rekeyed.get(decl.name)!;
    const record = now.keyed?.record;
    if (stage && !record) throw now.error;
    const differs = stage ? jsonDiff(stage.record.params, record!.params)[0] : undefined;
    if (!stage || differs)
      throw new UsageError(
        `${buildFile} does not describe the build it names: ` +
          (stage
            ? `stage ${decl.name} was built with params ` +
              `${pointerWords(differs!.path)} = ${JSON.stringify(differs!.from)}, ` +
              `its variables give ${JSON.stringify(differs!.to)}`
            : `it has no stage ${decl.name}`) +
          "; rebuild it",
      );
    for (const [input, ref] of Object.entries(decl.inputs)) {
      const [was, is] = [stage.record.inputs[input]?.file, record!.inputs[input]?.file];
      if ("file" in ref && was !== is)
        throw new UsageError(
          `${ref.file} is not the file stage ${decl.name} was built with ` +
            `(sha256 ${String(is).slice(0, 16)}…, recorded ${String(was).slice(0, 16)}…); rebuild first`,
        );
    }
  }
}

/** The result directory must be what these stages produced. */
function producedBy(rt: Runtime, resultDir: string, stages: BundleManifest["stages"]): void {
  for (const [file, from] of Object.entries(rt.spec.results?.files ?? {})) {
    const { stage, output } = resultSource(from);
    const path = join(resultDir, file);
    if (!existsSync(path) || sha256Hex(readFileSync(path)) !== stages[stage]?.outputs[output]) {
      throw new UsageError(`${path} is not what its build produced (${from}); rebuild first`);
    }
  }
}

type Put = (rel: string, data: string | Buffer) => void;

/** The spec a bundle carries: its runtime, its file here, the path build.json names it by, and the files it
 *  reads (`specFiles`). */
interface BundledSpec {
  rt: Runtime;
  file: string;
  path: string;
  files: string[];
}

/** The spec, its file inputs and a user task's sources, under spec/; returns the task's files. */
function putSpecFiles(put: Put, spec: BundledSpec, project: Project): string[] {
  put(`spec/${spec.path}`, readFileSync(spec.file));
  const filesRoot = specFilesRoot(project, spec.file);
  for (const file of spec.files) put(`spec/${file}`, readFileSync(resolve(filesRoot, file)));
  const user = spec.rt.task.user;
  const taskFiles = user
    ? filesUnder(user.source)
        .map((file) => relative(user.root, file).split(sep).join("/"))
        .sort()
    : [];
  for (const file of taskFiles) put(`spec/${file}`, readFileSync(resolve(user!.root, file)));
  return taskFiles;
}

/** Each stage's record, and its outputs but the data and what a private release withholds. */
function putStages(put: Put, stages: BundleManifest["stages"], withheld: Set<string>, cache: Cache): void {
  for (const [name, stage] of Object.entries(stages)) {
    put(`stages/${name}.json`, stableJson(stage));
    if (isData(stage.kind)) continue;
    for (const [output, hash] of Object.entries(stage.outputs))
      if (!withheld.has(`${name}/${output}`)) put(outputPath(name, output), cache.read(hash));
  }
}

/** Packs the staged files, with fixed times and owners: the same result packs to the same bytes. */
async function pack(staging: string, outFile: string): Promise<void> {
  const entries = listFiles(staging);
  const packing = { gzip: { level: 9 }, cwd: staging, portable: true, noMtime: true, mtime: new Date(0) };
  if (outFile === "-") await toStdout(create(packing, entries));
  else await create({ ...packing, file: outFile }, entries);
}

/** Streams a packed bundle onto stdout, and resolves once the last byte is handed over. */
function toStdout(pack: Pack): Promise<void> {
  return new Promise((done, fail) => {
    pack.on("error", fail);
    process.stdout.on("error", fail);
    pack.on("end", () => done());
    pack.pipe(process.stdout, { end: false });
  });
}

function listFiles(root: string, rel = ""): string[] {
  return readdirSync(join(root, rel), { withFileTypes: true })
    .sort((left, right) => (left.name < right.name ? -1 : 1))
    .flatMap((entry) => {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      return entry.isDirectory() ? listFiles(root, path) : [path];
    });
}

/** A partial run of a private release holds a few private items: the hashes its records carry (of its
 *  requests, and every key after them) would confirm a guess of those items, so it is never bundled. */
function refusePartial(resultDir: string, why: string): void {
  const metrics = join(resultDir, "metrics.json");
  const read = existsSync(metrics)
    ? (JSON.parse(readFileSync(metrics, "utf8")) as { partial?: unknown })
    : {};
  if (read.partial === true)
    throw new UsageError(
      `${resultDir} is a partial run (--limit or --subset) of a task whose release is private (${why}): ` +
        "its records hold hashes of a few private items, which would confirm a guess of them, so it is " +
        "never exported; export the full run",
    );
}
