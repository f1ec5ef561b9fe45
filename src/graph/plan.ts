// The stage graph: every reference resolved, cycles refused, stages in a dependency order.
import { diagnosticAt } from "../spec/document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import type { SpecFile, StageDecl } from "../spec/load.js";
import { escapePointer } from "../util/json.js";

export interface Plan {
  order: StageDecl[];
  downstream(stage: string): string[]; // stages that read `stage`, directly or not
}

export function planStages(spec: SpecFile, knownKinds: Set<string>): Plan {
  const byName = new Map(spec.stages.map((s) => [s.name, s]));
  const diagnostics: Diagnostic[] = [];
  const at = (s: StageDecl, rest: string) => `/stages/${escapePointer(s.name)}${rest}`;
  for (const s of spec.stages) {
    if (!knownKinds.has(s.kind)) {
      diagnostics.push(
        diagnosticAt(
          spec.src,
          at(s, "/kind"),
          `unknown stage kind \`${s.kind}\``,
          `use one of: ${[...knownKinds].sort().join(", ")}`,
        ),
      );
    }
    for (const [input, ref] of Object.entries(s.inputs)) {
      if ("stage" in ref && !byName.has(ref.stage)) {
        diagnostics.push(
          diagnosticAt(
            spec.src,
            at(s, `/inputs/${escapePointer(input)}/stage`),
            `unknown stage \`${ref.stage}\``,
            `name one of the stages of this spec: ${[...byName.keys()].join(", ")}`,
          ),
        );
      }
    }
  }
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
  if (diagnostics.length) throw new DiagnosticError(diagnostics);

  const deps = (s: StageDecl) => Object.values(s.inputs).flatMap((r) => ("stage" in r ? [r.stage] : []));
  const order: StageDecl[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (s: StageDecl, path: string[]) => {
    if (state.get(s.name) === "done") return;
    if (state.get(s.name) === "visiting") {
      const cycle = [...path.slice(path.indexOf(s.name)), s.name];
      throw new DiagnosticError([
        diagnosticAt(
          spec.src,
          at(s, "/inputs"),
          `the stages form a cycle: ${cycle.join(" -> ")}`,
          "remove one of these inputs so that every stage reads only stages before it",
        ),
      ]);
    }
    state.set(s.name, "visiting");
    for (const d of deps(s)) visit(byName.get(d)!, [...path, s.name]);
    state.set(s.name, "done");
    order.push(s);
  };
  for (const s of spec.stages) visit(s, []);

  const readers = new Map<string, string[]>();
  for (const s of spec.stages) for (const d of deps(s)) readers.set(d, [...(readers.get(d) ?? []), s.name]);
  const downstream = (name: string): string[] => {
    const seen = new Set<string>();
    const walk = (n: string) => {
      for (const r of readers.get(n) ?? [])
        if (!seen.has(r)) {
          seen.add(r);
          walk(r);
        }
    };
    walk(name);
    return order.map((s) => s.name).filter((n) => seen.has(n));
  };
  return { order, downstream };
}
