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
import { filesUnder } from "../runner/code.js";
import { create, type Pack } from "tar";
import { Cache } from "../runner/cache.js";
import { specFileOf, specFilesRoot } from "../runner/project.js";
import type { Manifest, BuildOptions } from "../runner/executor.js";
import { loadRuntime } from "../cli/runtime.js";
import { loadSpec, resultSource } from "../spec/load.js";
import { UsageError } from "../errors.js";
import { sha256Hex } from "../hash/sha256.js";
import { jsonDiff, pointerWords, stableJson, type Json } from "../util/json.js";
import { bundlePins, lockEntry, specFiles } from "./members.js";
import { BUNDLE_FORMAT, isData, outputPath, type BundleManifest } from "./layout.js";
import { withheldField } from "./private.js";

/** Packs the result into `outFile`, or onto stdout when it is `-` (the caller checked the place). */
export async function exportResult(resultDir: string, outFile: string, opts: BuildOptions): Promise<string> {
  const buildFile = join(resultDir, "build.json");
  if (!existsSync(buildFile))
    throw new UsageError(`${resultDir} is not a result directory of a medbench build (no build.json)`);
  const built = JSON.parse(readFileSync(buildFile, "utf8")) as {
    spec: string;
    spec_hash: string;
    variables: Record<string, Json>;
    stages: Record<string, { kind: string; key: string; outputs: Record<string, string> }>;
  };
  const specPath = built.spec;
  const specFile = specFileOf(opts.project, specPath);
  const declared = loadSpec(specFile).variables;
  const rt = await loadRuntime(
    specFile,
    Object.fromEntries(Object.entries(built.variables).filter(([k, v]) => k in declared && v !== null)),
  );
  if (rt.spec.specHash !== built.spec_hash)
    throw new UsageError(
      `${specPath} has changed since this result was built ` +
        `(spec_hash ${rt.spec.specHash.slice(0, 12)}…, the result's ${built.spec_hash.slice(0, 12)}…)`,
    );
  const cache = new Cache(opts.project.cacheDir);
  const stages: BundleManifest["stages"] = {};
  for (const [name, st] of Object.entries(built.stages)) {
    const m = cache.readManifest(st.key) as Manifest | null;
    if (!m)
      throw new UsageError(
        `the cache no longer holds stage ${name} of this result (key ${st.key.slice(0, 12)}…); ` +
          "rebuild it first",
      );
    for (const [output, hash] of Object.entries(m.outputs)) {
      if (!isData(st.kind) && !(await cache.verify(hash)))
        throw new UsageError(`the cache no longer holds ${name}/${output}; rebuild first`);
    }
    stages[name] = { kind: st.kind, key: st.key, outputs: m.outputs, record: m.record };
  }
  // build.json must name the build its stages record (its variables give each stage's params).
  for (const decl of rt.plan.order) {
    const st = stages[decl.name];
    const d = st ? jsonDiff(st.record.params, decl.params)[0] : undefined;
    if (!st || d)
      throw new UsageError(
        `${buildFile} does not describe the build it names: ` +
          (st
            ? `stage ${decl.name} was built with params ` +
              `${pointerWords(d!.path)} = ${JSON.stringify(d!.from)}, ` +
              `its variables give ${JSON.stringify(d!.to)}`
            : `it has no stage ${decl.name}`) +
          "; rebuild it",
      );
  }
  // The result directory must be what these stages produced.
  for (const [file, from] of Object.entries(rt.spec.results?.files ?? {})) {
    const { stage, output } = resultSource(from);
    const path = join(resultDir, file);
    if (!existsSync(path) || sha256Hex(readFileSync(path)) !== stages[stage]?.outputs[output]) {
      throw new UsageError(`${path} is not what its build produced (${from}); rebuild first`);
    }
  }
  // A private release's bundle leaves out the outputs that carry its text; no results file may be one.
  const private_ = withheldField(stages, rt.task.module);
  if (private_.withheld) refusePartial(resultDir, private_.withheld.why);
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
    put(`spec/${specPath}`, readFileSync(specFile));
    const filesRoot = specFilesRoot(opts.project, specFile);
    for (const f of files) put(`spec/${f}`, readFileSync(resolve(filesRoot, f)));
    const user = rt.task.user;
    const taskFiles = user
      ? filesUnder(user.source)
          .map((f) => relative(user.root, f).split(sep).join("/"))
          .sort()
      : [];
    for (const f of taskFiles) put(`spec/${f}`, readFileSync(resolve(user!.root, f)));
    for (const [name, st] of Object.entries(stages)) {
      put(`stages/${name}.json`, stableJson(st));
      if (isData(st.kind)) continue;
      for (const [output, hash] of Object.entries(st.outputs))
        if (!withheld.has(`${name}/${output}`)) put(outputPath(name, output), cache.read(hash));
    }
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      slug: rt.spec.slug,
      version: rt.spec.version,
      spec_hash: rt.spec.specHash,
      spec: specPath,
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
    const entries = listFiles(staging);
    // Fixed times and owners: the same result packs to the same bytes.
    const packing = { gzip: { level: 9 }, cwd: staging, portable: true, noMtime: true, mtime: new Date(0) };
    if (outFile === "-") await toStdout(create(packing, entries));
    else await create({ ...packing, file: outFile }, entries);
    return outFile;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
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
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((d) => {
      const p = rel ? `${rel}/${d.name}` : d.name;
      return d.isDirectory() ? listFiles(root, p) : [p];
    });
}

/** A partial run of a private release holds a few private items: the hashes its records carry (of its
 *  requests, and every key after them) would confirm a guess of those items, so it is never bundled. */
function refusePartial(resultDir: string, why: string): void {
  const metrics = join(resultDir, "metrics.json");
  const m = existsSync(metrics) ? (JSON.parse(readFileSync(metrics, "utf8")) as { partial?: unknown }) : {};
  if (m.partial === true)
    throw new UsageError(
      `${resultDir} is a partial run (--limit or --subset) of a task whose release is private (${why}): ` +
        "its records hold hashes of a few private items, which would confirm a guess of them, so it is " +
        "never exported; export the full run",
    );
}
