// medbench diff A B: two versions of a spec (files or REV:path), their hashes, every changed field, and the
// stages each change invalidates.
import { existsSync, readFileSync } from "../util/builtins.js";
import { resolve } from "node:path";
import { execa } from "execa";
import { parseSourceDoc, readSourceDoc, type SourceDoc } from "../specfile/document.js";
import { loadSpecFromSource, type SpecFile } from "../specfile/load.js";
import { planStages } from "../graph/plan.js";
import { DiagnosticError } from "../errors.js";
import { STAGE_KINDS } from "../../stages/index.js";
import { jsonDiff, pointerWords } from "../util/json.js";
import { sha256Hex } from "../hash/sha256.js";

interface Version {
  label: string;
  spec: SpecFile;
  readFile(path: string): Buffer | null;
}

async function version(arg: string, root: string): Promise<Version> {
  const match = /^([^:]+):(.+)$/.exec(arg);
  if (match && !existsSync(resolve(root, arg))) {
    const [, revName, path] = match as unknown as [string, string, string];
    const rev = await commitOf(revName, root);
    if (!rev)
      throw new DiagnosticError([
        {
          file: arg,
          message: `${revName} is not a git revision of this project (one commit, e.g. HEAD, v1, a hash)`,
          fix: "name one revision before the colon, e.g. HEAD~1:specs/voice-command.yaml (not a range)",
        },
      ]);
    const show = async (repoPath: string): Promise<Buffer | null> => {
      const blob = await execa("git", ["cat-file", "blob", `${rev}:./${repoPath}`], {
        cwd: root,
        encoding: "buffer",
        reject: false,
        stripFinalNewline: false,
      });
      return blob.exitCode === 0 ? Buffer.from(blob.stdout) : null;
    };
    const bytes = await show(path);
    if (!bytes)
      throw new DiagnosticError([
        {
          file: arg,
          message: `git has no ${path} at revision ${revName}`,
          fix: "check the revision (git log) and the path (relative to the project root)",
        },
      ]);
    const files = new Map<string, Buffer | null>();
    for (const file of await filesOf(parseSourceDoc(bytes, arg))) files.set(file, await show(file));
    return {
      label: arg,
      spec: loadSpecFromSource(parseSourceDoc(bytes, arg)),
      readFile: (repoPath) => files.get(repoPath) ?? null,
    };
  }
  const src = readSourceDoc(resolve(root, arg), arg);
  return {
    label: arg,
    spec: loadSpecFromSource(src),
    readFile: (repoPath) => {
      try {
        return readFileSync(resolve(root, repoPath));
      } catch {
        return null;
      }
    },
  };
}

/** The commit a revision names (`HEAD`, a tag, a hash), or null: a range (`HEAD..HEAD`) or an option names
 *  none, and `git show` would print something else than one file. */
async function commitOf(rev: string, root: string): Promise<string | null> {
  if (rev.startsWith("-")) return null;
  const found = await execa("git", ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`], {
    cwd: root,
    reject: false,
  });
  return found.exitCode === 0 && /^[0-9a-f]{40,64}$/.test(found.stdout.trim()) ? found.stdout.trim() : null;
}

/** The files a spec's stages read (an input `file:`); none when the document is not a spec at all (the
 *  spec check then says what it is). */
async function filesOf(src: SourceDoc): Promise<string[]> {
  const value = src.value as { stages?: unknown } | null;
  const stages = value !== null && typeof value === "object" ? value.stages : undefined;
  if (stages === null || typeof stages !== "object") return [];
  return Object.values(stages as Record<string, { inputs?: Record<string, { file?: unknown }> } | null>)
    .flatMap((stage) => Object.values(stage?.inputs ?? {}))
    .flatMap((i) => (i && typeof i.file === "string" ? [i.file] : []));
}

export interface SpecDiff {
  a: { label: string; spec_hash: string };
  b: { label: string; spec_hash: string };
  fields: { path: string; from: unknown; to: unknown }[];
  stages: { name: string; reasons: string[] }[];
}

/** A value of a diff; a field on one side only is `(none)` on the other. */
const shown = (value: unknown): string => (value === undefined ? "(none)" : JSON.stringify(value));

type Stage = SpecFile["stages"][number];

/** Why a stage of B differs from its namesake in A (`old`, none when A has no such stage). */
function stageReasons(old: Stage | undefined, stage: Stage, versionA: Version, versionB: Version): string[] {
  const reasons: string[] = [];
  if (!old) reasons.push("new stage");
  else {
    if (old.kind !== stage.kind) reasons.push(`kind ${old.kind} -> ${stage.kind}`);
    for (const change of jsonDiff(old.params, stage.params))
      reasons.push(`params ${pointerWords(change.path)}: ${shown(change.from)} -> ${shown(change.to)}`);
    for (const [name, ref] of Object.entries(stage.inputs)) {
      const before = old.inputs[name];
      if (JSON.stringify(before) !== JSON.stringify(ref))
        reasons.push(`input ${name}: ${JSON.stringify(before ?? null)} -> ${JSON.stringify(ref)}`);
      else if ("file" in ref) {
        const bytesA = versionA.readFile(ref.file),
          bytesB = versionB.readFile(ref.file);
        if ((bytesA && sha256Hex(bytesA)) !== (bytesB && sha256Hex(bytesB)))
          reasons.push(`input file ${ref.file} differs`);
      }
    }
    for (const name of Object.keys(old.inputs))
      if (!(name in stage.inputs)) reasons.push(`input ${name} removed`);
  }
  return reasons;
}

/** `a` and `b`: spec files or REV:path; `root`: the project root. */
export async function diffSpecs(specs: { a: string; b: string; root: string }): Promise<SpecDiff> {
  const versionA = await version(specs.a, specs.root);
  const versionB = await version(specs.b, specs.root);
  const kinds = new Set(STAGE_KINDS.keys());
  const planB = planStages(versionB.spec, kinds);
  planStages(versionA.spec, kinds);
  const byNameA = new Map(versionA.spec.stages.map((stage) => [stage.name, stage]));
  const direct = new Map<string, string[]>();
  for (const stage of versionB.spec.stages) {
    const reasons = stageReasons(byNameA.get(stage.name), stage, versionA, versionB);
    if (reasons.length) direct.set(stage.name, reasons);
  }
  const stages: SpecDiff["stages"] = [];
  const because = new Map<string, string[]>();
  for (const [name] of direct)
    for (const below of planB.downstream(name))
      if (!direct.has(below)) because.set(below, [...(because.get(below) ?? []), name]);
  for (const stage of planB.order) {
    if (direct.has(stage.name)) stages.push({ name: stage.name, reasons: direct.get(stage.name)! });
    else if (because.has(stage.name))
      stages.push({
        name: stage.name,
        reasons: [`downstream of ${[...new Set(because.get(stage.name)!)].join(", ")}`],
      });
  }
  for (const stage of versionA.spec.stages)
    if (!versionB.spec.stages.some((x) => x.name === stage.name))
      stages.push({ name: stage.name, reasons: ["removed"] });
  return {
    a: { label: versionA.label, spec_hash: versionA.spec.specHash },
    b: { label: versionB.label, spec_hash: versionB.spec.specHash },
    fields: jsonDiff(versionA.spec.src.value, versionB.spec.src.value),
    stages,
  };
}
