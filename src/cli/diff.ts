// medbench diff A B: two versions of a spec (files or REV:path), their hashes, every changed field, and the
// stages each change invalidates.
import { existsSync, readFileSync } from "../util/builtins.js";
import { resolve } from "node:path";
import { execa } from "execa";
import { parseSourceDoc, readSourceDoc, type SourceDoc } from "../spec/document.js";
import { loadSpecFromSource, type SpecFile } from "../spec/load.js";
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
  const m = /^([^:]+):(.+)$/.exec(arg);
  if (m && !existsSync(resolve(root, arg))) {
    const [, revName, path] = m as unknown as [string, string, string];
    const rev = await commitOf(revName, root);
    if (!rev)
      throw new DiagnosticError([
        {
          file: arg,
          message: `${revName} is not a git revision of this project (one commit, e.g. HEAD, v1, a hash)`,
          fix: "name one revision before the colon, e.g. HEAD~1:specs/voice-command.yaml (not a range)",
        },
      ]);
    const show = async (p: string): Promise<Buffer | null> => {
      const r = await execa("git", ["cat-file", "blob", `${rev}:./${p}`], {
        cwd: root,
        encoding: "buffer",
        reject: false,
        stripFinalNewline: false,
      });
      return r.exitCode === 0 ? Buffer.from(r.stdout) : null;
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
    for (const f of await filesOf(parseSourceDoc(bytes, arg))) files.set(f, await show(f));
    return {
      label: arg,
      spec: loadSpecFromSource(parseSourceDoc(bytes, arg)),
      readFile: (p) => files.get(p) ?? null,
    };
  }
  const src = readSourceDoc(resolve(root, arg), arg);
  return {
    label: arg,
    spec: loadSpecFromSource(src),
    readFile: (p) => {
      try {
        return readFileSync(resolve(root, p));
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
  const r = await execa("git", ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`], {
    cwd: root,
    reject: false,
  });
  return r.exitCode === 0 && /^[0-9a-f]{40,64}$/.test(r.stdout.trim()) ? r.stdout.trim() : null;
}

/** The files a spec's stages read (an input `file:`); none when the document is not a spec at all (the
 *  spec check then says what it is). */
async function filesOf(src: SourceDoc): Promise<string[]> {
  const value = src.value as { stages?: unknown } | null;
  const stages = value !== null && typeof value === "object" ? value.stages : undefined;
  if (stages === null || typeof stages !== "object") return [];
  return Object.values(stages as Record<string, { inputs?: Record<string, { file?: unknown }> } | null>)
    .flatMap((s) => Object.values(s?.inputs ?? {}))
    .flatMap((i) => (i && typeof i.file === "string" ? [i.file] : []));
}

export interface SpecDiff {
  a: { label: string; spec_hash: string };
  b: { label: string; spec_hash: string };
  fields: { path: string; from: unknown; to: unknown }[];
  stages: { name: string; reasons: string[] }[];
}

/** A value of a diff; a field on one side only is `(none)` on the other. */
const shown = (v: unknown): string => (v === undefined ? "(none)" : JSON.stringify(v));

/** `a` and `b`: spec files or REV:path; `root`: the project root. */
export async function diffSpecs({ a, b, root }: { a: string; b: string; root: string }): Promise<SpecDiff> {
  const A = await version(a, root);
  const B = await version(b, root);
  const kinds = new Set(STAGE_KINDS.keys());
  const planB = planStages(B.spec, kinds);
  planStages(A.spec, kinds);
  const byNameA = new Map(A.spec.stages.map((s) => [s.name, s]));
  const direct = new Map<string, string[]>();
  for (const s of B.spec.stages) {
    const old = byNameA.get(s.name);
    const reasons: string[] = [];
    if (!old) reasons.push("new stage");
    else {
      if (old.kind !== s.kind) reasons.push(`kind ${old.kind} -> ${s.kind}`);
      for (const d of jsonDiff(old.params, s.params))
        reasons.push(`params ${pointerWords(d.path)}: ${shown(d.from)} -> ${shown(d.to)}`);
      for (const [name, ref] of Object.entries(s.inputs)) {
        const before = old.inputs[name];
        if (JSON.stringify(before) !== JSON.stringify(ref))
          reasons.push(`input ${name}: ${JSON.stringify(before ?? null)} -> ${JSON.stringify(ref)}`);
        else if ("file" in ref) {
          const a = A.readFile(ref.file),
            b = B.readFile(ref.file);
          if ((a && sha256Hex(a)) !== (b && sha256Hex(b))) reasons.push(`input file ${ref.file} differs`);
        }
      }
      for (const name of Object.keys(old.inputs))
        if (!(name in s.inputs)) reasons.push(`input ${name} removed`);
    }
    if (reasons.length) direct.set(s.name, reasons);
  }
  const stages: SpecDiff["stages"] = [];
  const because = new Map<string, string[]>();
  for (const [name] of direct)
    for (const d of planB.downstream(name))
      if (!direct.has(d)) because.set(d, [...(because.get(d) ?? []), name]);
  for (const s of planB.order) {
    if (direct.has(s.name)) stages.push({ name: s.name, reasons: direct.get(s.name)! });
    else if (because.has(s.name))
      stages.push({
        name: s.name,
        reasons: [`downstream of ${[...new Set(because.get(s.name)!)].join(", ")}`],
      });
  }
  for (const s of A.spec.stages)
    if (!B.spec.stages.some((x) => x.name === s.name)) stages.push({ name: s.name, reasons: ["removed"] });
  return {
    a: { label: A.label, spec_hash: A.spec.specHash },
    b: { label: B.label, spec_hash: B.spec.specHash },
    fields: jsonDiff(A.spec.src.value, B.spec.src.value),
    stages,
  };
}
