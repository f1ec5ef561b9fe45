// prompts: the task turns release files and templates into model requests; --subset/--limit select a part.
import type { StageKind } from "../src/runner/stage.js";
import { StageError } from "../src/runner/stage.js";
import { jsonLines, stableJson, type Json } from "../src/util/json.js";
import { releaseFiles } from "./release.js";

interface Params {
  subset?: string | null;
  limit?: number | null;
  [k: string]: Json | undefined;
}

export const prompts: StageKind = {
  kind: "prompts",
  params: ["subset", "limit"],
  taskPart: "prompts",
  async run(ctx) {
    const p = ctx.params as Params;
    const templates: Record<string, string> = {};
    for (const [name, input] of Object.entries(ctx.inputs))
      if (name !== "release") templates[name] = input.text();
    const all = ctx.task.buildRequests({
      release: releaseFiles(ctx.inputs.release),
      templates,
      params: ctx.params,
    });
    let chosen = all;
    const subsets = p.subset
      ? String(p.subset)
          .split(",")
          .map((s) => s.trim())
      : null;
    if (subsets) {
      const known = new Set(all.map((r) => String(r.meta.subset)));
      const unknown = subsets.filter((s) => !known.has(s));
      if (unknown.length)
        throw new StageError(`unknown subset ${unknown.join(", ")}`, `use one of: ${[...known].join(", ")}`);
      chosen = chosen.filter((r) => subsets.includes(String(r.meta.subset)));
    }
    if (p.limit != null) {
      // The first N items of each subset, in release order.
      const seen = new Map<string, number>();
      chosen = chosen.filter((r) => {
        const s = String(r.meta.subset);
        const n = seen.get(s) ?? 0;
        seen.set(s, n + 1);
        return n < Number(p.limit);
      });
    }
    const info = {
      total: all.length,
      selected: chosen.length,
      partial: chosen.length !== all.length,
      subset: subsets,
      limit: p.limit ?? null,
    };
    return { requests: jsonLines(chosen), info: stableJson(info) };
  },
};
