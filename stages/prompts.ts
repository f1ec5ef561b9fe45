// prompts: the task turns release files and templates into model requests; --subset/--limit select a part.
import type { StageKind, StageProblem, StageShape } from "../src/runner/stage.js";
import type { RequestConfiguration, TaskModule, TaskRequest } from "../src/contract/task.js";
import { StageError } from "../src/errors.js";
import { stableJson, type Json } from "../src/util/json.js";
import { writeRecordsFile } from "../src/contract/records.js";
import { releaseFiles } from "./release.js";

interface Params {
  configurations?: string | null;
  subset?: string | null;
  limit?: number | null;
  [k: string]: Json | undefined;
}

export const prompts: StageKind = {
  kind: "prompts",
  inBundle: "reads-data",
  inputs: { release: { release: true, optional: true, description: "the release files" } },
  otherFiles: true, // templates, by input name
  outputs: { requests: "requests", info: "info" },
  params: {
    subset: { type: ["string", "null"], description: "a comma list of subsets" },
    limit: { type: ["integer", "null"], minimum: 1, description: "the first N units of each subset" },
    configurations: {
      type: ["string", "null"],
      description:
        "request configurations: `all`, or a comma list of the task's names (default: its headline)",
    },
  },
  check: checkNames,
  taskParts: () => ["prompts"],
  // The configurations built, and the one built when none is chosen.
  taskData: (task) => ({
    configurations: (task.configurations ?? null) as Json,
    headline: task.headline ?? null,
  }),
  // Built from a spec's bundled sample: part of the key, since the label below is part of the output.
  async identify(ctx) {
    const source = ctx.inputs.release?.source;
    return source?.sample ? { sample: source.label } : null;
  },
  async run(ctx) {
    const p = ctx.params as Params;
    const templates: Record<string, string> = {};
    for (const [name, input] of Object.entries(ctx.inputs))
      if (name !== "release") templates[name] = input.text();
    const release = releaseFiles(ctx.inputs.release);
    const notices = new Set<string>();
    const notice = (m: string) => void notices.add(m);
    const source = ctx.inputs.release?.source;
    if (source?.sample)
      notice(
        `built from the bundled SYNTHETIC sample ${source.label}, not the real release: it says nothing ` +
          "about any model (pass --data-dir with the real release)",
      );
    const chosen0 = chosenConfigurations(ctx.task, p.configurations ?? null);
    const all = chosen0
      ? chosen0.flatMap(([name, c]) =>
          withConfiguration(
            name,
            c,
            ctx.task.buildRequests({
              release,
              templates,
              params: ctx.params,
              configuration: { name, ...c },
              notice,
            }),
          ),
        )
      : ctx.task.buildRequests({ release, templates, params: ctx.params, notice });
    let chosen = all;
    const subsets = p.subset ? commaList(String(p.subset)) : null;
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
      ...(chosen0 ? { configurations: chosen0.map(([name]) => name) } : {}),
      ...(notices.size ? { notices: [...notices] } : {}),
      ...(source?.sample ? { sample: source.label } : {}),
    };
    return { requests: writeRecordsFile("requests", chosen, ctx.tempPath()), info: stableJson(info) };
  },
};

/** The configurations to build, in the task's declaration order; null for a task that declares none. */
export function chosenConfigurations(
  task: TaskModule,
  value: string | null,
): [string, RequestConfiguration][] | null {
  const declared = task.configurations;
  if (!declared) return null;
  const names = Object.keys(declared);
  const wanted =
    value === null ? [task.headline ?? names[0]!] : value.trim() === "all" ? names : commaList(value);
  return names.filter((n) => wanted.includes(n)).map((n) => [n, declared[n]!]);
}

/** Each request of a configuration carries its name (in its id, so ids stay unique) and generation fields. */
function withConfiguration(name: string, c: RequestConfiguration, requests: TaskRequest[]): TaskRequest[] {
  return requests.map((r) => ({
    ...r,
    id: `${name}/${r.id}`,
    configuration: name,
    generation: { ...c.generation, ...(r.generation ?? {}) },
  }));
}

/** A comma list parameter (`--subset a,b`, `--configurations a,b`) as its names. */
const commaList = (value: string): string[] => value.split(",").map((s) => s.trim());

/** Configuration and subset names are checked with the spec, before anything runs. */
function checkNames(stage: StageShape, task: TaskModule): StageProblem[] {
  const p = stage.params as { configurations?: unknown; subset?: unknown };
  const out: StageProblem[] = [];
  if (typeof p.configurations === "string") {
    const names = Object.keys(task.configurations ?? {});
    if (!names.length)
      out.push({
        pointer: "/params/configurations",
        message: "this task declares no request configurations",
        fix: "drop the `configurations` parameter",
      });
    else if (p.configurations.trim() !== "all")
      out.push(...unknownNames("configurations", p.configurations, names, "`all` or a comma list"));
  }
  // A task that declares no subsets has them from its data: checked when its requests are built.
  if (typeof p.subset === "string" && task.subsets)
    out.push(...unknownNames("subset", p.subset, task.subsets, "a comma list"));
  return out;
}

/** The names of a comma list parameter that are not among `known`, as one problem at that parameter. */
function unknownNames(
  param: "configurations" | "subset",
  value: string,
  known: readonly string[],
  form: string,
): StageProblem[] {
  const unknown = commaList(value).filter((s) => !known.includes(s));
  return unknown.length
    ? [
        {
          pointer: `/params/${param}`,
          message: `unknown ${param.replace(/s$/, "")} ${unknown.map((u) => JSON.stringify(u)).join(", ")}`,
          fix: `use ${form} of: ${known.join(", ")}`,
        },
      ]
    : [];
}
