// Every byte of a bundle accounted for: the set of members is exactly what the spec and the manifest name,
// the copies of the manifest (stages/*.json, lock.json) are the manifest, and every stage's key record is
// what the bundled spec, its bundled files and the upstream outputs give (its key the hash of that record).
// What no recomputation here can reach (the code hashes of the build, a model route's identity) is covered
// by the stage key, and the key by the next stage's record and by the published spec_hash in the end.
import { existsSync, lstatSync, readFileSync, readdirSync } from "../util/builtins.js";
import { join } from "node:path";
import { sha256Hex } from "../hash/sha256.js";
import { stageKey } from "../runner/keys.js";
import type { SpecFile, StageDecl } from "../spec/load.js";
import { jsonDiff, pointerWords, stableJson, type Json } from "../util/json.js";
import { BUNDLE_FORMAT, isData, outputPath, type BundleManifest } from "./layout.js";

export interface MemberCheck {
  name: string;
  ok: boolean | null;
  lines: string[];
}

/** The project paths of the files the spec's stages read (templates, schemas), sorted. */
export function specFiles(spec: SpecFile): string[] {
  const files = spec.stages.flatMap((s) =>
    Object.values(s.inputs).flatMap((r) => ("file" in r ? [r.file] : [])),
  );
  return [...new Set(files)].sort();
}

/** The lock entry a bundle carries, derived from its manifest (lock.json must be exactly this). */
export function lockEntry(b: BundleManifest): string {
  return stableJson({
    [b.spec]: {
      slug: b.slug,
      spec_hash: b.spec_hash,
      pins: b.pins,
      stages: Object.fromEntries(
        Object.entries(b.stages).map(([n, st]) => [n, { kind: st.kind, key: st.key, outputs: st.outputs }]),
      ),
    },
  });
}

/** The pins a bundle records: the release files each data stage read, under the source it read them from. */
export function bundlePins(stages: BundleManifest["stages"]): BundleManifest["pins"] {
  const pins: BundleManifest["pins"] = {};
  for (const st of Object.values(stages)) {
    if (!isData(st.kind)) continue;
    const source = (st.record.identity as { source?: unknown } | null)?.source;
    if (typeof source === "string") pins[source] = { ...(pins[source] ?? {}), ...st.outputs };
  }
  return pins;
}

function walk(root: string, rel = ""): { path: string; regular: boolean }[] {
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((d) => {
    const p = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) return walk(root, p);
    return [{ path: p, regular: lstatSync(join(root, p)).isFile() }];
  });
}

const show = (v: unknown) => (v === undefined ? "(none)" : JSON.stringify(v));

/** Which members the bundle holds against which it should, and whether its copies of the manifest agree. */
export function checkMembers(
  dir: string,
  b: BundleManifest,
  spec: SpecFile | null,
  withheld: readonly string[],
): MemberCheck {
  const lines: string[] = [];
  const expected = new Set<string>(["bundle.json", "lock.json", `spec/${b.spec}`]);
  for (const f of spec ? specFiles(spec) : b.files) expected.add(`spec/${f}`);
  for (const f of b.task_files ?? []) expected.add(`spec/${f}`);
  for (const [name, st] of Object.entries(b.stages)) {
    expected.add(`stages/${name}.json`);
    if (!isData(st.kind))
      for (const o of Object.keys(st.outputs))
        if (!withheld.includes(`${name}/${o}`)) expected.add(outputPath(name, o));
  }
  for (const f of Object.keys(spec?.results?.files ?? b.results)) expected.add(`results/${f}`);
  const present = walk(dir);
  for (const m of present.filter((m) => !expected.has(m.path)).sort((x, y) => (x.path < y.path ? -1 : 1)))
    lines.push(`${m.path}: not a member of a medbench bundle (added after export)`);
  for (const m of present.filter((m) => expected.has(m.path) && !m.regular))
    lines.push(`${m.path}: a link or special file, not a file`);
  const have = new Set(present.map((m) => m.path));
  for (const p of [...expected].sort()) if (!have.has(p)) lines.push(`${p}: missing from the bundle`);

  // bundle.json against the spec it names.
  const field = (name: string, recorded: unknown, want: unknown) => {
    for (const d of jsonDiff(recorded, want))
      lines.push(
        `bundle.json ${name}${d.path === "/" ? "" : "." + pointerWords(d.path)}: ${show(d.from)}, ` +
          `the bundled spec gives ${show(d.to)}`,
      );
  };
  if (b.format !== BUNDLE_FORMAT)
    lines.push(`bundle.json format: ${show(b.format)}, this medbench reads format ${BUNDLE_FORMAT}`);
  if (spec) {
    field("slug", b.slug, spec.slug);
    field("version", b.version, spec.version);
    field("spec_hash", b.spec_hash, spec.specHash);
    field("files", b.files, specFiles(spec));
    field("results", b.results, spec.results?.files ?? {});
    field("variables", b.variables, spec.variables);
    const kinds = (s: Record<string, { kind: string }>) =>
      Object.fromEntries(Object.entries(s).map(([n, st]) => [n, st.kind]));
    field("stages", kinds(b.stages), Object.fromEntries(spec.stages.map((s) => [s.name, s.kind])));
  }
  field("pins", b.pins, bundlePins(b.stages));
  // A private release's withheld outputs are the task's to name, not the bundle's.
  field("withheld outputs", b.withheld?.outputs ?? [], withheld);

  // The manifest's copies: byte for byte what the manifest says.
  for (const [name, st] of Object.entries(b.stages)) {
    const f = join(dir, "stages", `${name}.json`);
    if (existsSync(f) && readFileSync(f, "utf8") !== stableJson(st))
      lines.push(`stages/${name}.json: differs from stage ${name} in bundle.json`);
  }
  const lock = join(dir, "lock.json");
  if (existsSync(lock) && readFileSync(lock, "utf8") !== lockEntry(b))
    lines.push("lock.json: differs from the lock entry bundle.json gives (keys, outputs or pins)");
  return {
    name: "members",
    ok: lines.length === 0,
    lines: lines.length ? lines : [`${have.size} members, each one the spec and the manifest name`],
  };
}

/** Each stage's key record recomputed from the bundled spec (params), its bundled files and the recorded
 *  outputs of the stages it reads; `identity` recomputes what a kind works out itself (null: not here). */
export async function checkRecords(
  dir: string,
  b: BundleManifest,
  spec: SpecFile,
  identity: (decl: StageDecl) => Promise<{ value: Json } | null>,
): Promise<MemberCheck> {
  const lines: string[] = [];
  const diff = (stage: string, what: string, recorded: unknown, want: unknown, from: string) => {
    for (const d of jsonDiff(recorded, want))
      lines.push(
        `stage ${stage}: ${what}${d.path === "/" ? "" : "." + pointerWords(d.path)} is ${show(d.from)} ` +
          `in its record, ${show(d.to)} ${from}`,
      );
  };
  for (const decl of spec.stages) {
    const st = b.stages[decl.name];
    if (!st) continue; // named by the members check
    const r = st.record;
    if (stageKey(r) !== st.key)
      lines.push(`stage ${decl.name}: its key ${st.key.slice(0, 12)}… is not the hash of its record`);
    if (r.kind !== decl.kind) lines.push(`stage ${decl.name}: its record is of kind ${show(r.kind)}`);
    diff(decl.name, "params", r.params, decl.params, "from the spec and the bundle's variables");
    const inputs: Record<string, Record<string, string>> = {};
    for (const [name, ref] of Object.entries(decl.inputs)) {
      if ("stage" in ref) inputs[name] = b.stages[ref.stage]?.outputs ?? {};
      else {
        const f = join(dir, "spec", ref.file);
        if (existsSync(f)) inputs[name] = { file: sha256Hex(readFileSync(f)) };
        else inputs[name] = r.inputs[name] ?? {}; // missing: named by the members check
      }
    }
    for (const d of jsonDiff(r.inputs, inputs)) {
      const [input] = pointerWords(d.path).split(".");
      const ref = input === undefined ? undefined : decl.inputs[input];
      lines.push(
        ref && "file" in ref
          ? `spec/${ref.file}: not the file stage ${decl.name} was built with ` +
              `(sha256 ${String(d.to).slice(0, 16)}…, recorded ${String(d.from).slice(0, 16)}…)`
          : `stage ${decl.name}: input ${pointerWords(d.path)} is ${show(d.from)} in its record, ` +
              `${show(d.to)} in the outputs the bundle records`,
      );
    }
    const id = await identity(decl);
    if (id) diff(decl.name, "identity", r.identity, id.value, "recomputed here");
    if (isData(decl.kind)) {
      const files = (r.identity as { files?: Record<string, string | null> } | null)?.files ?? {};
      for (const [path, pin] of Object.entries(files))
        if (pin !== null && st.outputs[path] !== pin)
          lines.push(`stage ${decl.name}: ${path} is pinned ${pin.slice(0, 16)}…, recorded otherwise`);
    }
  }
  return {
    name: "records",
    ok: lines.length === 0,
    lines: lines.length
      ? lines
      : [`${spec.stages.length} stage keys recomputed from the spec, its files and the recorded outputs`],
  };
}
