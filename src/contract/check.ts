// A spec checked against what its stage kinds and its task declare, before anything runs: every input
// named and of the right record type, every results file a real output, every parameter known and of its
// declared type and range. Each problem is a diagnostic at its file:line:column.
import { diagnosticAt } from "../specfile/document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import { lookupPointer, resultSource, type SpecFile, type StageDecl } from "../specfile/load.js";
import { escapePointer, type Json } from "../util/json.js";
import type { CheckEnv, StageKind } from "./stage.js";
import type { TaskModule } from "./task.js";
import type { InputDecl, ParamDecl, ParamDecls } from "./declarations.js";
import { checkValue } from "./params.js";
import { REDACTED } from "../model/redact.js";
import { staysInside } from "../util/paths.js";

/** The parameters a stage of this kind takes: the kind's own and the task's for that kind. */
export function paramsOf(kind: StageKind, task: TaskModule | null): ParamDecls {
  const own = (task?.params as Record<string, ParamDecls> | undefined)?.[kind.kind] ?? {};
  return { ...kind.params, ...own };
}

export function checkSpec(
  spec: SpecFile,
  kinds: ReadonlyMap<string, StageKind>,
  task: TaskModule | null,
  env: CheckEnv | null = null,
): void {
  const out: Diagnostic[] = [];
  const byName = new Map(spec.stages.map((stage) => [stage.name, stage]));
  for (const stage of spec.stages) {
    const kind = kinds.get(stage.kind);
    if (!kind) continue; // the planner reports unknown kinds
    checkInputs({ spec, stage, kind }, { byName, kinds }, out);
    checkParams({ spec, stage, kind }, task, out);
    if (kind.check && task)
      for (const problem of kind.check(stage, task, env)) {
        const pointer = `/stages/${escapePointer(stage.name)}${problem.pointer}`;
        const diagnostic = diagnosticAt(
          spec.src,
          pointer,
          `${problem.message}${fromVariable(spec, pointer)}`,
          problem.fix,
        );
        const hide = (text: string) => (problem.secret ? text.split(problem.secret).join(REDACTED) : text);
        out.push(
          diagnostic.sourceLine === undefined
            ? diagnostic
            : { ...diagnostic, sourceLine: hide(diagnostic.sourceLine) },
        );
      }
  }
  for (const [file, target] of Object.entries(spec.results?.files ?? {})) {
    const { stage, output } = resultSource(target);
    const kind = kinds.get(byName.get(stage)?.kind ?? "");
    if (!kind || kind.outputs === "release" || output in kind.outputs) continue;
    out.push(
      diagnosticAt(
        spec.src,
        `/results/files/${escapePointer(file)}`,
        `stage ${stage} (${kind.kind}) has no output \`${output}\``,
        `use one of: ${Object.keys(kind.outputs)
          .map((output) => `${stage}/${output}`)
          .join(", ")}`,
      ),
    );
  }
  if (out.length) throw new DiagnosticError(out);
}

/** The spec's stages by name, and the stage kinds by name. */
interface StageTable {
  byName: Map<string, StageDecl>;
  kinds: ReadonlyMap<string, StageKind>;
}

/** A stage of the spec under check, with its kind. */
interface CheckedStage {
  spec: SpecFile;
  stage: StageDecl;
  kind: StageKind;
}

function checkInputs(checked: CheckedStage, table: StageTable, out: Diagnostic[]): void {
  const { spec, stage, kind } = checked;
  const at = (rest: string) => `/stages/${escapePointer(stage.name)}${rest}`;
  for (const [name, ref] of Object.entries(stage.inputs)) {
    const problem = inputProblem(checked, table, name, ref);
    if (problem) out.push(problem);
  }
  for (const [name, decl] of Object.entries(kind.inputs)) {
    if (decl.optional || name in stage.inputs) continue;
    out.push(
      diagnosticAt(
        spec.src,
        at("/inputs"),
        `stage ${stage.name} (${kind.kind}) needs the input \`${name}\``,
        decl.file ? `add ${name}: { file: PATH }` : `add ${name}: { stage: NAME }${suggest(decl, table)}`,
        false,
      ),
    );
  }
}

/** What is wrong with the input `name` a stage names: unknown to its kind, a file that should be a stage
 *  or the other way round, a file outside the project, or a stage without the records it needs. */
function inputProblem(
  { spec, stage, kind }: CheckedStage,
  table: StageTable,
  name: string,
  ref: StageDecl["inputs"][string],
): Diagnostic | null {
  const { byName, kinds } = table;
  const decl: InputDecl | undefined = kind.inputs[name] ?? (kind.otherFiles ? { file: true } : undefined);
  const where = `/stages/${escapePointer(stage.name)}/inputs/${escapePointer(name)}`;
  if (!decl) {
    const declared = Object.keys(kind.inputs);
    const names = declared.length ? `: ${declared.join(", ")}` : "";
    return diagnosticAt(
      spec.src,
      where,
      `a ${kind.kind} stage has no input \`${name}\``,
      `its inputs are${names || " none"}`,
      true,
    );
  }
  if (decl.file) {
    if (!("file" in ref))
      return diagnosticAt(spec.src, where, `input \`${name}\` is a file`, `write { file: PATH }`);
    // Refused before anything runs; a link out of the project is found when the file is hashed.
    if (!staysInside("/project", ref.file))
      return diagnosticAt(
        spec.src,
        `${where}/file`,
        `input file ${ref.file} is outside the project`,
        "name a file inside the project, relative to its root (copy the file in if need be)",
      );
    return null;
  }
  if (!("stage" in ref))
    return diagnosticAt(spec.src, where, `input \`${name}\` reads a stage`, `write { stage: NAME }`);
  const from = byName.get(ref.stage);
  const fromKind = from && kinds.get(from.kind);
  if (!fromKind) return null; // the planner reports unknown stages and kinds
  const problem = mismatch(decl, fromKind);
  if (!problem) return null;
  return diagnosticAt(
    spec.src,
    `${where}/stage`,
    `input \`${name}\` of stage ${stage.name} needs ${problem}; stage ${ref.stage} is a ${from.kind} stage`,
    `name a stage that produces it${suggest(decl, table)}`,
  );
}

/** What the referenced kind lacks for this input, or null when it fits. */
function mismatch(decl: InputDecl, from: StageKind): string | null {
  if (decl.release) return from.outputs === "release" ? null : "a release (a download stage)";
  const needs = Object.entries(decl.outputs ?? {});
  const outputs = from.outputs;
  const missing = needs.filter(([output, type]) => outputs === "release" || outputs[output] !== type);
  if (!missing.length) return null;
  return missing.map(([output, type]) => `output \`${output}\` (${type})`).join(" and ");
}

/** The spec's stages that could feed an input of `decl`, named after " (here: …)", or "". */
function suggest(decl: InputDecl, { byName, kinds }: StageTable): string {
  const fits = [...byName.values()].filter((stage) => {
    const stageKind = kinds.get(stage.kind);
    return stageKind && mismatch(decl, stageKind) === null;
  });
  return fits.length ? ` (here: ${fits.map((stage) => stage.name).join(", ")})` : "";
}

function checkParams({ spec, stage, kind }: CheckedStage, task: TaskModule | null, out: Diagnostic[]): void {
  const decls = paramsOf(kind, task);
  const base = `/stages/${escapePointer(stage.name)}/params`;
  const params = stage.params;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return; // the schema says so
  const known = Object.keys(decls);
  for (const [name, value] of Object.entries(params)) {
    const decl: ParamDecl | undefined = decls[name];
    if (!decl) {
      out.push(
        diagnosticAt(
          spec.src,
          `${base}/${escapePointer(name)}`,
          `unknown parameter \`${name}\` for a ${kind.kind} stage`,
          known.length ? `use one of: ${known.join(", ")}` : "this stage takes no parameters",
          true,
        ),
      );
      continue;
    }
    for (const problem of checkValue(value, decl, `/${escapePointer(name)}`)) {
      const pointer = `${base}${problem.pointer}`;
      out.push(
        diagnosticAt(spec.src, pointer, `${problem.message}${fromVariable(spec, pointer)}`, problem.fix),
      );
    }
  }
  for (const param of kind.required ?? [])
    if (!(param in params))
      out.push(
        diagnosticAt(
          spec.src,
          base,
          `stage ${stage.name} (${kind.kind}) needs the parameter \`${param}\``,
          `add ${param}: …`,
        ),
      );
}

/** When the value came from a build variable, say which (it may have been set on the command line). */
function fromVariable(spec: SpecFile, pointer: string): string {
  const raw = lookupPointer(spec.src.value as Json, pointer);
  if (raw && typeof raw === "object" && !Array.isArray(raw) && typeof raw.$var === "string")
    return ` (the value of variable \`${raw.$var}\`)`;
  if (raw && typeof raw === "object" && !Array.isArray(raw) && typeof raw.$spec === "string")
    return ` (the published spec's ${raw.$spec})`;
  return "";
}
