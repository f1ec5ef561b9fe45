// While a stage runs in a process of its own (task code, isolated), medbench's process only waits for it.
// The first stage after it that runs in medbench's process loads its modules then (its kind's `ahead`), so
// that the load is off the build's wall time (docs/performance.md, "Loaded ahead"). Loading a module ahead
// changes nothing its run does: the run finds it loaded.
import type { BuildEvent } from "../contract/events.js";
import type { StageKind } from "../contract/stage.js";
import { stageRunsIsolated, type Runtime } from "../runner/execution/scope.js";
import { loadNotLeft } from "./small-run-heap.js";

/** A build's listener of its events that loads ahead (`rt`: the build's runtime). */
export function loadingAhead(rt: Runtime): (e: BuildEvent) => void {
  const loaded = new Set<StageKind>();
  const isolated = (index: number) => stageRunsIsolated(rt, rt.plan.order[index]!);
  return (e) => {
    if (e.type !== "stage-start") return;
    const at = rt.plan.order.findIndex((decl) => decl.name === e.stage);
    if (at < 0 || !isolated(at)) return;
    let next = at + 1;
    while (next < rt.plan.order.length && isolated(next)) next++;
    const kind = next < rt.plan.order.length ? rt.kinds.get(rt.plan.order[next]!.kind) : undefined;
    if (!kind?.ahead || loaded.has(kind)) return;
    loaded.add(kind);
    // The stage's process (started ahead, or now) gets its job after its stage-start: this runs while it
    // works.
    setImmediate(() => {
      try {
        loadNotLeft(() => kind.ahead!());
      } catch {
        // Only a head start: the stage's own run loads it again, and says what fails.
      }
    });
  };
}
