// Isolated stages' processes started ahead (./isolate.ts): when a stage is about to run, the next isolated
// stages that read it, directly or not, start theirs, so that a Node start-up is not on the build's
// critical path. A process whose stage turns out fresh is ended unused.
import { rmSync } from "../../util/builtins.js";
import { tempName } from "../../util/fsutil.js";
import { codeOf, specFilePath, stageRunsIsolated, type BuildScope } from "./scope.js";
import type { WarmStage } from "./isolate.js";
import type { StageDecl } from "../../specfile/load.js";
import type { Json } from "../../util/json.js";

/** How many processes wait for their stage at once: each is a Node process (about 40 MB) whose start-up
 *  takes a core the build leaves idle. */
const AHEAD = 2;

export class WarmPool {
  private readonly waiting = new Map<string, WarmStage>();
  private readonly started = new Set<string>();

  constructor(private readonly scope: BuildScope) {}

  /** Stage `decl` is about to run: the next isolated stages that read it start their processes. */
  async ahead(decl: StageDecl): Promise<void> {
    const order = this.scope.rt.plan.order;
    const reached = new Set([decl.name]);
    for (const later of order.slice(order.indexOf(decl) + 1)) {
      if (this.waiting.size >= AHEAD) return;
      if (!Object.values(later.inputs).some((ref) => "stage" in ref && reached.has(ref.stage))) continue;
      reached.add(later.name);
      if (this.started.has(later.name) || !stageRunsIsolated(this.scope.rt, later)) continue;
      await this.startAhead(later);
    }
  }

  /** A process that cannot be started ahead is left to its stage, whose run then fails in its own name. */
  private async startAhead(decl: StageDecl): Promise<void> {
    try {
      this.waiting.set(decl.name, await this.start(decl, codeOf(this.scope, decl).task));
    } catch {
      /* its stage starts it, and says why it cannot */
    }
  }

  /** The process of stage `decl`, keyed with `taskRecord`: the one started ahead, or one started now (in
   *  place of one that ended while it waited: its stage's code never ran in it). */
  async take(decl: StageDecl, taskRecord: Json): Promise<WarmStage> {
    const warm = this.waiting.get(decl.name);
    if (warm?.taskRecord === taskRecord && !warm.process.ended()) {
      this.waiting.delete(decl.name);
      return warm;
    }
    this.drop(decl.name);
    return this.start(decl, taskRecord);
  }

  /** Stage `name` did not run (it was fresh): its process, if started, ends, and its folder goes. */
  drop(name: string): void {
    const warm = this.waiting.get(name);
    this.waiting.delete(name);
    warm?.process.discard();
    if (warm) rmSync(warm.folder, { force: true, recursive: true });
  }

  /** Ends every process still waiting (the build is over, or failed). */
  close(): void {
    for (const name of [...this.waiting.keys()]) this.drop(name);
  }

  private async start(decl: StageDecl, taskRecord: Json): Promise<WarmStage> {
    this.started.add(decl.name);
    const { warmStage } = await import("./isolate.js");
    const files = Object.values(decl.inputs).flatMap((ref) =>
      "file" in ref ? [specFilePath(this.scope, ref.file)] : [],
    );
    return warmStage(this.scope.rt, decl, taskRecord, tempName(this.scope.cache.tmp), files);
  }
}
