// The options shared by the commands that open a project and build or read a spec's stages.
import { existsSync, mkdirSync, realpathSync, rmdirSync, statSync } from "../util/builtins.js";
import { dirname, join, relative } from "node:path";
import type { BuildOptions } from "../runner/execution/executor.js";
import { openProject, type Project } from "../runner/project/project.js";
import { readdirSync } from "../util/builtins.js";
import { installRoot } from "../util/paths.js";
import { resolve } from "node:path";
import type { Json } from "../util/json.js";
import { intOption } from "./args.js";
import { UsageError } from "../errors.js";
import { usageError, type Command } from "./command.js";

/** Every option of the commands that open a project, once: each command takes the ones it uses
 *  (`optionsOf`), and any other is refused by name (args.ts `parse`), never accepted and ignored. */
const OPTIONS = {
  model: { type: "string" },
  judge: { type: "string", multiple: true },
  registry: { type: "string", multiple: true },
  "data-dir": { type: "string" },
  subset: { type: "string" },
  limit: { type: "string" },
  configurations: { type: "string" },
  var: { type: "string", multiple: true },
  refresh: { type: "string", multiple: true },
  "trust-changed": { type: "boolean" },
  frozen: { type: "boolean" },
  rekey: { type: "boolean" },
  shard: { type: "string" },
  roster: { type: "boolean" },
  "max-cost": { type: "string" },
  batch: { type: "boolean" },
  wait: { type: "boolean" },
  live: { type: "boolean" },
  "run-task-code": { type: "boolean" },
  output: { type: "string", short: "o" },
  project: { type: "string" },
  cache: { type: "string" },
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
} as const;

type OptionName = keyof typeof OPTIONS;

/** The options of one command, from the one table. */
export function optionsOf<K extends OptionName>(...names: K[]): Pick<typeof OPTIONS, K> {
  return Object.fromEntries(names.map((name) => [name, OPTIONS[name]])) as Pick<typeof OPTIONS, K>;
}

/** What a spec's build variables are chosen with (build and status). */
export const VARIABLE_OPTIONS = [
  "model",
  "judge",
  "registry",
  "data-dir",
  "subset",
  "limit",
  "configurations",
  "var",
] as const;

/** The one spec a command names: a file, or the name of a spec medbench ships (`voice-command`). */
export function oneSpec(positionals: string[], command: Command, name: string, projectRoot: string): string {
  if (positionals.length !== 1) throw usageError(command, `${name} takes one spec file`);
  return specOrBuiltIn(positionals[0]!, name, projectRoot);
}

/** A spec argument: a file, or the name of a spec medbench ships. An install outside the project (global,
 *  linked) names its specs in medbench.lock as specs/NAME.yaml, so there a name the project also has a spec
 *  of (a copy from `init --task`) is refused: the project's file would answer for the built-in one. An
 *  install inside the project (node_modules/medbench) is recorded by that path: no clash. */
export function specOrBuiltIn(arg: string, name: string, projectRoot: string): string {
  const installed = builtInSpec(arg);
  if (installed === null) return arg;
  const own = resolve(projectRoot, "specs", `${arg}.yaml`);
  const outside = relative(projectRoot, installed).startsWith("..");
  if (outside && existsSync(own) && realpathSync(own) !== realpathSync(installed))
    throw new UsageError(
      `${arg} names both medbench's built-in spec and this project's specs/${arg}.yaml, ` +
        `which medbench.lock would record under one name (medbench is installed outside the project): ` +
        `use the project's by its path (medbench ${name} specs/${arg}.yaml), ` +
        `or install medbench in the project (npm i -D medbench)`,
    );
  return installed;
}

/** The installed spec a bare name (no `/`, no `.yaml`, no such file here) names, if medbench ships one. */
export function builtInSpec(arg: string): string | null {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(arg) || existsSync(arg)) return null;
  const file = resolve(installRoot(), "specs", `${arg}.yaml`);
  return existsSync(file) ? file : null;
}

/** The names of the specs medbench ships (specs/*.yaml of the install). */
export function builtInSpecNames(): string[] {
  return readdirSync(resolve(installRoot(), "specs"))
    .filter((file) => file.endsWith(".yaml"))
    .map((file) => file.slice(0, -".yaml".length))
    .sort();
}

/**
 * The build options and the build variables (`--model`, `--judge`, `--subset`, `--limit`) of parsed flags.
 */
export function buildOptions(values: Record<string, unknown>): {
  opts: BuildOptions;
  vars: Record<string, Json>;
} {
  const project = projectOf(values);
  const limit = values.limit === undefined ? null : intOption(values.limit as string, "limit", 0);
  if (limit !== null && limit < 1) throw new UsageError("--limit takes a positive whole number");
  const vars: Record<string, Json> = {};
  if (values.model !== undefined) vars.model = values.model as string;
  if (values.judge !== undefined) vars.judges = values.judge as string[];
  if (values.subset !== undefined) vars.subset = listOption(values, "subset");
  if (limit !== null) vars.limit = limit;
  for (const assignment of (values.var as string[] | undefined) ?? []) {
    const match = /^([A-Za-z_][\w-]*)=(.*)$/s.exec(assignment);
    if (!match)
      throw new UsageError(`--var ${JSON.stringify(assignment)}: write NAME=VALUE (e.g. --var limit=10)`);
    vars[match[1]!] = varValue(match[2]!);
  }
  if (values.configurations !== undefined) vars.configurations = listOption(values, "configurations");
  if (values["data-dir"] === "")
    throw new UsageError('--data-dir "" names no folder: name the release folder, or leave the option out');
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

/**
 * The project a command works in: the current folder, or `--project DIR`, which must name a medbench project
 * (an existing folder holding specs/ or medbench.lock): never a missing folder, a file or a system folder,
 * in which a command would create cache/ before failing (docs/hardening.md, on what medbench owns).
 */
export function projectDir(option: unknown): string {
  if (option === undefined) return process.cwd();
  const dir = String(option);
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory())
    throw new UsageError(`--project ${dir}: ${st ? "not a folder" : "no such folder"}`);
  if (!existsSync(join(dir, "specs")) && !existsSync(join(dir, "medbench.lock")))
    throw new UsageError(
      `--project ${dir} is not a medbench project (it holds neither specs/ nor medbench.lock): ` +
        "name the folder with your specs/ (or run medbench there)",
    );
  return dir;
}

/** A comma list option: `--subset=` or `--subset a,,b` is a mistake, not "every subset" or one named "". */
function listOption(values: Record<string, unknown>, name: string): string {
  const value = values[name] as string;
  if (value.split(",").some((part) => part.trim() === ""))
    throw new UsageError(
      `--${name} ${JSON.stringify(value)} names an empty ${name.replace(/s$/, "")}: ` +
        `give names separated by commas`,
    );
  return value;
}

/** `--var NAME=VALUE`: numbers, true/false and null as such (as YAML would read them), anything else
 *  text. */
function varValue(raw: string): Json {
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (raw === "true" || raw === "false") return raw === "true";
  if (raw === "null") return null;
  return raw;
}

/** `--project` and `--cache`: a cache that exists is a folder (`--cache medbench.lock` would be written
 *  into). */
export function projectOf(values: Record<string, unknown>): Project {
  const project = openProject(projectDir(values.project), values.cache as string | undefined);
  if (values.cache === "") throw new UsageError('--cache "" names no folder: name the cache folder');
  if (existsSync(project.cacheDir) && !statSync(project.cacheDir).isDirectory())
    throw new UsageError(
      `--cache ${String(values.cache ?? "cache")}: ${project.cacheDir} is a file, not a folder ` +
        "(name a cache folder, e.g. --cache cache)",
    );
  const problem = uncreatable(project.cacheDir);
  if (problem)
    throw new UsageError(
      `--cache ${String(values.cache ?? "cache")}: cannot create ${project.cacheDir} (${problem}): ` +
        "name a folder you can write to",
    );
  return project;
}

/**
 * Why folder `dir` could not be created, or null if it exists or can be. Probed one level at a time, and
 * what the probe made is removed again: Node's recursive mkdir never returns when a parent answers ENOENT
 * to mkdir while it exists (/proc/x/c), and every later mkdir of a cache subfolder is recursive.
 */
function uncreatable(dir: string): string | null {
  const missing: string[] = [];
  for (let folder = dir; !existsSync(folder); folder = dirname(folder)) {
    if (dirname(folder) === folder) return "no such root";
    missing.unshift(folder);
  }
  const made: string[] = [];
  try {
    for (const folder of missing) {
      if (madeHere(folder)) made.unshift(folder);
    }
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return `${err.code ?? err.message} at ${err.path ?? dir}`;
  } finally {
    // Another build may have made the same folder meanwhile and be writing into it: then it stays.
    for (const folder of made) removeIfEmpty(folder);
  }
}

function removeIfEmpty(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    /* not empty: another build is using it */
  }
}

/** Makes a folder; false when another process made it first (two builds starting at once). Another
 *  build's probe may remove its empty folder between our EEXIST and our look: then it is made again. */
function madeHere(folder: string, tries = 3): boolean {
  try {
    mkdirSync(folder);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const found = statSync(folder, { throwIfNoEntry: false });
    if (found?.isDirectory()) return false;
    if (!found && tries > 1) return madeHere(folder, tries - 1);
    throw e;
  }
}
