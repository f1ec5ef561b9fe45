// prompts: the task turns release files and templates into model requests; --subset/--limit select a part.
import type { StageKind } from "../src/runner/stage.js";
import { StageError } from "../src/runner/stage.js";
import { stableJson, type Json } from "../src/util/json.js";
import { writeRecords } from "../src/contract/records.js";
import { releaseFiles } from "./release.js";

interface Params {
  subset?: string | null;
  limit?: number | null;
  [k: string]: Json | undefined;
}

export const prompts: StageKind = {
  kind: "prompts",
  inputs: { release: { release: true, optional: true, description: "the release files" } },
  otherFiles: true, // templates, by input name
  outputs: { requests: "requests", info: "info" },
  params: {
    subset: { type: ["string", "null"], description: "a comma list of subsets" },
    limit: { type: ["integer", "null"], minimum: 1, description: "the first N units of each subset" },
  },
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
      // The first N units of each subset, in release order: a unit (a pair) is kept or dropped whole.
      const kept = new Map<string, Set<string>>();
      chosen = chosen.filter((r) => {
        const s = String(r.meta.subset);
        const units = kept.get(s) ?? new Set<string>();
        kept.set(s, units);
        const unit = r.unit ?? r.id;
        if (!units.has(unit) && units.size < Number(p.limit)) units.add(unit);
        return units.has(unit);
      });
    }
    const info = {
      total: all.length,
      selected: chosen.length,
      partial: chosen.length !== all.length,
      subset: subsets,
      limit: p.limit ?? null,
    };
    return { requests: writeRecords("requests", chosen), info: stableJson(info) };
  },
};
