// The members check: the set of members is exactly what the spec and the manifest name, bundle.json agrees
// with the spec it names, and the copies of the manifest (stages/*.json, lock.json) are the manifest.
import { existsSync, lstatSync, readFileSync, readdirSync } from "../../util/builtins.js";
import { join } from "node:path";
import type { SpecFile } from "../../specfile/load.js";
import { jsonDiff, pointerWords, stableJson } from "../../util/json.js";
import { BUNDLE_FORMAT, isData, outputPath, type BundleManifest } from "../layout.js";
import { bundlePins, lockEntry, specFiles } from "../members.js";
import type { Check } from "./types.js";

export const show = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));

function walk(root: string, rel = ""): { path: string; regular: boolean }[] {
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((entry) => {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return walk(root, path);
    return [{ path, regular: lstatSync(join(root, path)).isFile() }];
  });
}

/** The paths a bundle of this manifest and spec holds, every one. */
function expectedMembers(manifest: BundleManifest, spec: SpecFile | null, withheld: readonly string[]) {
  const expected = new Set<string>(["bundle.json", "lock.json", `spec/${manifest.spec}`]);
  for (const file of spec ? specFiles(spec) : manifest.files) expected.add(`spec/${file}`);
  for (const file of manifest.task_files ?? []) expected.add(`spec/${file}`);
  for (const [name, stage] of Object.entries(manifest.stages)) {
    expected.add(`stages/${name}.json`);
    if (!isData(stage.kind))
      for (const output of Object.keys(stage.outputs))
        if (!withheld.includes(`${name}/${output}`)) expected.add(outputPath(name, output));
  }
  for (const file of Object.keys(spec?.results?.files ?? manifest.results)) expected.add(`results/${file}`);
  return expected;
}

/** Members added, members that are links, members missing; and how many the bundle holds. */
function memberLines(dir: string, expected: Set<string>): { lines: string[]; count: number } {
  const lines: string[] = [];
  const present = walk(dir);
  const added = present
    .filter((member) => !expected.has(member.path))
    .sort((left, right) => (left.path < right.path ? -1 : 1));
  for (const member of added)
    lines.push(`${member.path}: not a member of a medbench bundle (added after export)`);
  for (const member of present.filter((member) => expected.has(member.path) && !member.regular))
    lines.push(`${member.path}: a link or special file, not a file`);
  const have = new Set(present.map((member) => member.path));
  for (const path of [...expected].sort())
    if (!have.has(path)) lines.push(`${path}: missing from the bundle`);
  return { lines, count: have.size };
}

/** bundle.json against the spec it names. */
function manifestLines(manifest: BundleManifest, spec: SpecFile | null, withheld: readonly string[]) {
  const lines: string[] = [];
  const field = (name: string, recorded: unknown, want: unknown) => {
    for (const diff of jsonDiff(recorded, want))
      lines.push(
        `bundle.json ${name}${diff.path === "/" ? "" : "." + pointerWords(diff.path)}: ` +
          `${show(diff.from)}, the bundled spec gives ${show(diff.to)}`,
      );
  };
  if (manifest.format !== BUNDLE_FORMAT)
    lines.push(`bundle.json format: ${show(manifest.format)}, this medbench reads format ${BUNDLE_FORMAT}`);
  if (spec) {
    field("slug", manifest.slug, spec.slug);
    field("version", manifest.version, spec.version);
    field("spec_hash", manifest.spec_hash, spec.specHash);
    field("files", manifest.files, specFiles(spec));
    field("results", manifest.results, spec.results?.files ?? {});
    field("variables", manifest.variables, spec.variables);
    const kinds = (stages: Record<string, { kind: string }>) =>
      Object.fromEntries(Object.entries(stages).map(([name, stage]) => [name, stage.kind]));
    field(
      "stages",
      kinds(manifest.stages),
      Object.fromEntries(spec.stages.map((decl) => [decl.name, decl.kind])),
    );
  }
  field("pins", manifest.pins, bundlePins(manifest.stages));
  // A private release's withheld outputs are the task's to name, not the bundle's.
  field("withheld outputs", manifest.withheld?.outputs ?? [], withheld);
  return lines;
}

/** The manifest's copies: byte for byte what the manifest says. */
function copyLines(dir: string, manifest: BundleManifest): string[] {
  const lines: string[] = [];
  for (const [name, stage] of Object.entries(manifest.stages)) {
    const file = join(dir, "stages", `${name}.json`);
    if (existsSync(file) && readFileSync(file, "utf8") !== stableJson(stage))
      lines.push(`stages/${name}.json: differs from stage ${name} in bundle.json`);
  }
  const lock = join(dir, "lock.json");
  if (existsSync(lock) && readFileSync(lock, "utf8") !== lockEntry(manifest))
    lines.push("lock.json: differs from the lock entry bundle.json gives (keys, outputs or pins)");
  return lines;
}

/** Which members the bundle holds against which it should, and whether its copies of the manifest agree. */
export function checkMembers(
  dir: string,
  manifest: BundleManifest,
  spec: SpecFile | null,
  withheld: readonly string[],
): Check {
  const members = memberLines(dir, expectedMembers(manifest, spec, withheld));
  const lines = [...members.lines, ...manifestLines(manifest, spec, withheld), ...copyLines(dir, manifest)];
  return {
    name: "members",
    ok: lines.length === 0,
    lines: lines.length ? lines : [`${members.count} members, each one the spec and the manifest name`],
  };
}
