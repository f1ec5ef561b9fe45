// prompts: the task turns release files and templates into model requests; --subset/--limit select a part.
import type { StageKind, StageProblem, StageShape } from "../src/contract/stage.js";
import type { RequestConfiguration, TaskModule, TaskRequest } from "../src/contract/task.js";
import { StageError } from "../src/errors.js";
import { stableJson, type Json } from "../src/util/json.js";
import { writeRecordsFile } from "../src/contract/records.js";
import { releaseFiles } from "./release.js";

interface Params {
  only_models?: Record<string, Json> | null;
  model?: string | null;
  configurations?: string | null;
  subset?: string | null;
  limit?: number | null;
  [field: string]: Json | undefined;
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
    only_models: {
      type: ["object", "null"],
      description:
        "requests only when `model` is one of this object's keys (e.g. the spec's per-model overrides); " +
        "none otherwise: a stage that applies to some models only",
    },
    model: { type: ["string", "null"], description: "the model built (read with only_models)" },
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
    const settings = ctx.params as Params;
    const notices = new Set<string>();
    const notice = (message: string) => void notices.add(message);
    const source = ctx.inputs.release?.source;
    if (source?.sample)
      notice(
        `built from the bundled SYNTHETIC sample ${source.label}, not the real release: it says nothing ` +
          "about any model (pass --data-dir with the real release)",
      );
    const configurations = chosenConfigurations(ctx.task, settings.configurations ?? null);
    const applies = !settings.only_models || String(settings.model) in settings.only_models;
    const all = applies ? allRequests(ctx, configurations, notice) : [];
    const subsets = settings.subset ? commaList(String(settings.subset)) : null;
    const inSubsets = subsets ? requestsInSubsets(all, subsets) : all;
    const chosen = settings.limit != null ? firstUnits(inSubsets, Number(settings.limit)) : inSubsets;
    const info = {
      total: all.length,
      selected: chosen.length,
      partial: chosen.length !== all.length,
      subset: subsets,
      limit: settings.limit ?? null,
      ...(configurations ? { configurations: configurations.map(([name]) => name) } : {}),
      ...(notices.size ? { notices: [...notices] } : {}),
      ...(source?.sample ? { sample: source.label } : {}),
    };
    return { requests: writeRecordsFile("requests", chosen, ctx.tempPath()), info: stableJson(info) };
  },
};

type Context = Parameters<StageKind["run"]>[0];

/** Every request the task builds: once per chosen configuration, or once for a task that declares none. */
function allRequests(
  ctx: Context,
  configurations: [string, RequestConfiguration][] | null,
  notice: (message: string) => void,
): TaskRequest[] {
  const templates: Record<string, string> = {};
  for (const [name, input] of Object.entries(ctx.inputs))
    if (name !== "release") templates[name] = input.text();
  const release = releaseFiles(ctx.inputs.release);
  if (!configurations) return ctx.task.buildRequests({ release, templates, params: ctx.params, notice });
  return configurations.flatMap(([name, configuration]) =>
    withConfiguration(
      name,
      configuration,
      ctx.task.buildRequests({
        release,
        templates,
        params: ctx.params,
        configuration: { name, ...configuration },
        notice,
      }),
    ),
  );
}

/** The requests of the named subsets; a name the requests do not hold is refused. */
function requestsInSubsets(all: TaskRequest[], subsets: string[]): TaskRequest[] {
  const known = new Set(all.map((request) => String(request.meta.subset)));
  const unknown = subsets.filter((subset) => !known.has(subset));
  if (unknown.length)
    throw new StageError(`unknown subset ${unknown.join(", ")}`, `use one of: ${[...known].join(", ")}`);
  return all.filter((request) => subsets.includes(String(request.meta.subset)));
}

/** The first `limit` units of each subset, in release order: a unit (a pair) is kept or dropped whole. */
function firstUnits(requests: TaskRequest[], limit: number): TaskRequest[] {
  const kept = new Map<string, Set<string>>();
  return requests.filter((request) => {
    const subset = String(request.meta.subset);
    const units = kept.get(subset) ?? new Set<string>();
    kept.set(subset, units);
    const unit = request.unit ?? request.id;
    if (!units.has(unit) && units.size < limit) units.add(unit);
    return units.has(unit);
  });
}

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
  return names.filter((name) => wanted.includes(name)).map((name) => [name, declared[name]!]);
}

/** Each request of a configuration carries its name (in its id, so ids stay unique) and generation
 *  fields. */
function withConfiguration(
  name: string,
  configuration: RequestConfiguration,
  requests: TaskRequest[],
): TaskRequest[] {
  return requests.map((request) => ({
    ...request,
    id: `${name}/${request.id}`,
    configuration: name,
    generation: { ...configuration.generation, ...(request.generation ?? {}) },
  }));
}

/** A comma list parameter (`--subset a,b`, `--configurations a,b`) as its names. */
const commaList = (value: string): string[] => value.split(",").map((name) => name.trim());

/** Configuration and subset names are checked with the spec, before anything runs. */
function checkNames(stage: StageShape, task: TaskModule): StageProblem[] {
  const settings = stage.params as { configurations?: unknown; subset?: unknown };
  const out: StageProblem[] = [];
  if (typeof settings.configurations === "string") {
    const names = Object.keys(task.configurations ?? {});
    if (!names.length)
      out.push({
        pointer: "/params/configurations",
        message: "this task declares no request configurations",
        fix: "drop the `configurations` parameter",
      });
    else if (settings.configurations.trim() !== "all")
      out.push(...unknownNames("configurations", settings.configurations, names, "`all` or a comma list"));
  }
  // A task that declares no subsets has them from its data: checked when its requests are built.
  if (typeof settings.subset === "string" && task.subsets)
    out.push(...unknownNames("subset", settings.subset, task.subsets, "a comma list"));
  return out;
}

/** The names of a comma list parameter that are not among `known`, as one problem at that parameter. */
function unknownNames(
  param: "configurations" | "subset",
  value: string,
  known: readonly string[],
  form: string,
): StageProblem[] {
  const unknown = commaList(value).filter((name) => !known.includes(name));
  const quoted = unknown.map((name) => JSON.stringify(name)).join(", ");
  return unknown.length
    ? [
        {
          pointer: `/params/${param}`,
          message: `unknown ${param.replace(/s$/, "")} ${quoted}`,
          fix: `use ${form} of: ${known.join(", ")}`,
        },
      ]
    : [];
}
