// A build holds V8's optimising compiler off from its start (src/load/small-run-heap.ts, holdCompiler) until
// its first stage that computes in medbench's process: a stage whose outputs are neither fetched data nor a
// model's replies, and whose task code (if any) does not run in a process of its own. A voice-command build
// against a server releases it as its bootstrap starts, after the model stage's peak of memory.
import type { BuildEvent } from "../contract/events.js";
import type { Runtime } from "../runner/execution/scope.js";
import { runsIsolated } from "../runner/keys/stage-code.js";
import { releaseCompiler } from "./small-run-heap.js";

/** A build's listener of its events that releases the compiler (`rt`: the build's runtime). */
export function releasingCompiler(rt: Runtime): (e: BuildEvent) => void {
  let released = false;
  return (e) => {
    if (released || e.type !== "stage-start") return;
    const decl = rt.plan.order.find((stage) => stage.name === e.stage);
    const kind = decl && rt.kinds.get(decl.kind);
    if (!kind || kind.inBundle === "data" || kind.inBundle === "model") return;
    if (runsIsolated(kind, decl.params, rt.task)) return;
    released = true;
    releaseCompiler();
  };
}
