// The stage graph: every reference resolved, cycles refused, stages in a dependency order.
import { diagnosticAt } from "../specfile/document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import type { SpecFile, StageDecl } from "../specfile/load.js";
import { escapePointer } from "../util/json.js";

export interface Plan {
  order: StageDecl[];
  downstream(stage: string): string[]; // stages that read `stage`, directly or not
}

export function planStages(spec: SpecFile, knownKinds: Set<string>): Plan {
  const byName = new Map(spec.stages.map((stage) => [stage.name, stage]));
  const diagnostics = [...stageProblems(spec, knownKinds, byName), ...resultsProblems(spec, byName)];
  if (diagnostics.length) throw new DiagnosticError(diagnostics);
  const order = dependencyOrder(spec, byName);
  return { order, downstream: downstreamOf(spec, order) };
}

type StagesByName = Map<string, StageDecl>;

const pointerOf = (stage: StageDecl, rest: string) => `/stages/${escapePointer(stage.name)}${rest}`;

const stagesRead = (stage: StageDecl) =>
  Object.values(stage.inputs).flatMap((ref) => ("stage" in ref ? [ref.stage] : []));

/** Each stage's kind is a known one and each stage it reads is a stage of the spec. */
function stageProblems(spec: SpecFile, knownKinds: Set<string>, byName: StagesByName): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const stage of spec.stages) {
    if (!knownKinds.has(stage.kind)) {
      diagnostics.push(
        diagnosticAt(
          spec.src,
          pointerOf(stage, "/kind"),
          `unknown stage kind \`${stage.kind}\``,
          `use one of: ${[...knownKinds].sort().join(", ")}`,
        ),
      );
    }
    for (const [input, ref] of Object.entries(stage.inputs)) {
      if ("stage" in ref && !byName.has(ref.stage)) {
        diagnostics.push(
          diagnosticAt(
            spec.src,
            pointerOf(stage, `/inputs/${escapePointer(input)}/stage`),
            `unknown stage \`${ref.stage}\``,
            `name one of the stages of this spec: ${[...byName.keys()].join(", ")}`,
          ),
        );
      }
    }
  }
  return diagnostics;
}

/** Each results file names a stage of the spec (STAGE/OUTPUT). */
function resultsProblems(spec: SpecFile, byName: StagesByName): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const [file, target] of Object.entries(spec.results?.files ?? {})) {
    const stage = target.split("/")[0]!;
    if (!byName.has(stage))
      diagnostics.push(
        diagnosticAt(
          spec.src,
          `/results/files/${escapePointer(file)}`,
          `unknown stage \`${stage}\``,
          "write STAGE/OUTPUT with a stage of this spec",
        ),
      );
  }
  return diagnostics;
}

/** The stages in an order where each comes after those it reads; a cycle is refused, naming it. */
function dependencyOrder(spec: SpecFile, byName: StagesByName): StageDecl[] {
  const order: StageDecl[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (stage: StageDecl, path: string[]) => {
    if (state.get(stage.name) === "done") return;
    if (state.get(stage.name) === "visiting") {
      const cycle = [...path.slice(path.indexOf(stage.name)), stage.name];
      throw new DiagnosticError([
        diagnosticAt(
          spec.src,
          pointerOf(stage, "/inputs"),
          `the stages form a cycle: ${cycle.join(" -> ")}`,
          "remove one of these inputs so that every stage reads only stages before it",
        ),
      ]);
    }
    state.set(stage.name, "visiting");
    for (const read of stagesRead(stage)) visit(byName.get(read)!, [...path, stage.name]);
    state.set(stage.name, "done");
    order.push(stage);
  };
  for (const stage of spec.stages) visit(stage, []);
  return order;
}

/** The stages that read a stage, directly or not, in the plan's order. */
function downstreamOf(spec: SpecFile, order: StageDecl[]): (name: string) => string[] {
  const readers = new Map<string, string[]>();
  for (const stage of spec.stages)
    for (const read of stagesRead(stage)) readers.set(read, [...(readers.get(read) ?? []), stage.name]);
  return (name) => {
    const seen = new Set<string>();
    const walk = (from: string) => {
      for (const reader of readers.get(from) ?? [])
        if (!seen.has(reader)) {
          seen.add(reader);
          walk(reader);
        }
    };
    walk(name);
    return order.map((stage) => stage.name).filter((stageName) => seen.has(stageName));
  };
}
