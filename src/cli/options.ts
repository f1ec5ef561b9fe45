// The options shared by the commands that open a project and build or read a spec's stages.
import type { BuildOptions } from "../runner/executor.js";
import { openProject } from "../runner/project.js";
import type { Json } from "../util/json.js";
import { intOption, UsageError } from "./args.js";
import { usageError, type Command } from "./command.js";

export const BUILD_OPTIONS = {
  model: { type: "string" },
  judge: { type: "string", multiple: true },
  registry: { type: "string", multiple: true },
  "data-dir": { type: "string" },
  subset: { type: "string" },
  limit: { type: "string" },
  refresh: { type: "string", multiple: true },
  "trust-changed": { type: "boolean" },
  frozen: { type: "boolean" },
  project: { type: "string" },
  cache: { type: "string" },
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
} as const;

export function oneSpec(positionals: string[], command: Command, name: string): string {
  if (positionals.length !== 1) throw usageError(command, `${name} takes one spec file`);
  return positionals[0]!;
}

/** The build options and the build variables (`--model`, `--judge`, `--subset`, `--limit`) of parsed flags. */
export function buildOptions(values: Record<string, unknown>): {
  opts: BuildOptions;
  vars: Record<string, Json>;
} {
  const project = openProject(
    (values.project as string | undefined) ?? process.cwd(),
    values.cache as string | undefined,
  );
  const limit = values.limit === undefined ? null : intOption(values.limit as string, "limit", 0);
  if (limit !== null && limit < 1) throw new UsageError("--limit takes a positive whole number");
  const vars: Record<string, Json> = {};
  if (values.model !== undefined) vars.model = values.model as string;
  if (values.judge !== undefined) vars.judges = values.judge as string[];
  if (values.subset !== undefined) vars.subset = values.subset as string;
  if (limit !== null) vars.limit = limit;
  const dataDir = (values["data-dir"] as string | undefined) ?? process.env.MEDBENCH_DATA_DIR;
  return {
    vars,
    opts: {
      project,
      dataDir: dataDir || undefined,
      frozen: Boolean(values.frozen),
      trustChanged: Boolean(values["trust-changed"]),
      refresh: (values.refresh as string[] | undefined) ?? [],
      env: process.env,
      registryFiles: (values.registry as string[] | undefined) ?? [],
      resultsSuffix: vars.subset !== undefined || vars.limit !== undefined ? ".partial" : "",
    },
  };
}
