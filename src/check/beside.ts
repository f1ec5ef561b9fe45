// The check's `beside:` metrics against the runs they are shown for: a name that no run's metrics.json
// holds is a misspelling (the leaderboard would show an empty column), refused at its place in the spec.
import { diagnosticAt } from "../specfile/document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import type { SpecFile } from "../specfile/load.js";
import type { CheckDecl } from "./declare.js";
import { intervalOf, type MetricsJson } from "./runs.js";

/** Throws when a `beside:` name is a metric of none of `runs` (no runs: nothing to check it against). */
export function checkBeside(spec: SpecFile, decl: CheckDecl, runs: MetricsJson[]): void {
  if (runs.length === 0) return;
  const known = new Set(
    runs.flatMap((metrics) =>
      Object.keys(metrics.metrics ?? {}).filter((name) => intervalOf(metrics, name) !== null),
    ),
  );
  const problems: Diagnostic[] = decl.beside.flatMap((name, i) =>
    known.has(name)
      ? []
      : [
          diagnosticAt(
            spec.src,
            `/check/beside/${i}`,
            `beside: ${name} is not a metric of any run of ${spec.slug}`,
            `name one of the runs' metrics: ${[...known].sort().join(", ")}`,
          ),
        ],
  );
  if (problems.length) throw new DiagnosticError(problems);
}
