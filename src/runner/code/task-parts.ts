// A task's parts (src/contract/task.ts TaskParts): which compiled module holds each function a stage calls,
// checked against the task object, so that a stage is keyed on what that function reaches and no more.
// The check is by identity: the value the task object holds must be an export of the declared module, so a
// wrapper written in the wiring module (index.ts), whose code no part's key would hold, is refused.
import { join, relative } from "node:path";
import type { TaskModule, TaskPart, TaskParts } from "../../contract/task.js";
import { taskFolder } from "../../contract/task-folder.js";
import { unguarded } from "./task-guard.js";

/** Where a declared part's value comes from: its compiled module (install-relative) and, per task member,
 *  the name it is exported under (a renamed or swapped export changes the key, as the module's code
 *  does). */
export interface PartBinding {
  module: string;
  exports: Record<string, string>;
}

/** The task members a part binds (absent ones left out). */
function membersOf(task: TaskModule, part: TaskPart): Record<string, unknown> {
  const present = (members: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(members).filter(([, member]) => member !== undefined));
  if (part.startsWith("baseline ")) {
    const baseline = task.baselines[part.slice("baseline ".length)];
    return baseline ? present({ reply: baseline.reply, fit: baseline.fit }) : {};
  }
  switch (part) {
    case "prompts":
      return { buildRequests: task.buildRequests };
    case "parse":
      return { parseReply: task.parseReply };
    case "score":
      return present({ score: task.score, rescore: task.rescore });
    case "statistics":
      return present({ statistics: task.statistics });
    case "judge":
      return present({ judgeRequests: task.judgeRequests });
  }
  return {};
}

/** The source file a part is declared in (relative to the task folder), or undefined. */
function declaredSource(parts: TaskParts, part: TaskPart): string | undefined {
  if (!part.startsWith("baseline ")) return parts[part as Exclude<TaskPart, `baseline ${string}`>];
  const baselines = parts.baselines;
  return typeof baselines === "string" ? baselines : baselines?.[part.slice("baseline ".length)];
}

/** The field of `parts` that declares a part, as a person reads it (`parts.score`, `parts.baselines.x`). */
function fieldOf(parts: TaskParts, part: TaskPart): string {
  if (!part.startsWith("baseline ")) return `parts.${part}`;
  return typeof parts.baselines === "string"
    ? "parts.baselines"
    : `parts.baselines.${part.slice("baseline ".length)}`;
}

/** A source of the task folder: a relative path of plain names, `/` separated (no absolute path, no `..`,
 *  `.` or empty part, no backslash). A module outside the folder, even one the task loads, would key a
 *  stage on another folder's compiled copy (for a task of the user's repository, a stale one). */
const inFolder = (source: unknown): boolean =>
  typeof source === "string" &&
  !/^([A-Za-z]:|\/)/.test(source) &&
  !source.includes("\\") &&
  source.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..");

/** Every part the task declares. */
function declaredParts(task: TaskModule): TaskPart[] {
  const parts = task.parts ?? {};
  const out: TaskPart[] = (["prompts", "parse", "score", "statistics", "judge"] as const).filter(
    (part) => parts[part] !== undefined,
  );
  if (parts.baselines !== undefined)
    for (const name of Object.keys(task.baselines))
      if (declaredSource(parts, `baseline ${name}`)) out.push(`baseline ${name}`);
  return out;
}

/** A task part's compiled module: `dist/<task folder>/<source>.js`. */
export function compiledPart(task: string, source: string): string {
  return join("dist", taskFolder(task), source.replace(/\.[cm]?ts$/, ".js"));
}

export interface TaskBindings {
  /** Declared parts, checked; a part not here is keyed on the whole task folder. */
  parts: Map<TaskPart, PartBinding>;
  /** What is wrong with the declaration (empty when nothing). */
  problems: string[];
}

const bound = new WeakMap<TaskModule, TaskBindings>();

/**
 * The declared parts of the task module loaded from `task`'s folder under `root`, each checked: its module
 * is one the task's modules loaded (CommonJS: in require.cache) and exports each value the part binds.
 * `compiledDir`: where under `root` the task's compiled modules are (a task of the user's repository:
 * `tasks/<name>` under the project's cache/compiled).
 */
export function taskBindings(
  root: string,
  task: string,
  module: TaskModule,
  compiledDir = join("dist", taskFolder(task)),
): TaskBindings {
  module = unguarded(module);
  const hit = bound.get(module);
  if (hit) return hit;
  const parts = new Map<TaskPart, PartBinding>();
  const problems: string[] = [];
  const declared = module.parts ?? {};
  if (typeof declared.baselines === "object")
    for (const name of Object.keys(declared.baselines))
      if (!(name in module.baselines))
        problems.push(`parts.baselines names ${name}, which is no built-in model`);
  for (const part of declaredParts(module)) {
    const source = declaredSource(declared, part)!;
    if (!inFolder(source)) {
      problems.push(
        `${fieldOf(declared, part)} names ${source}, which is not a source file inside the task's folder ` +
          "(write its path from the folder, e.g. scorer.ts: no absolute path, no `..`)",
      );
      continue;
    }
    const file = join(compiledDir, source.replace(/\.[cm]?ts$/, ".js"));
    const loaded = require.cache[join(root, file)];
    if (!loaded) {
      problems.push(`parts: ${source} (${part}) is not a module the task loads`);
      continue;
    }
    const exports = loaded.exports as Record<string, unknown>;
    const names: Record<string, string> = {};
    for (const [member, value] of Object.entries(membersOf(module, part))) {
      const name = Object.keys(exports)
        .sort()
        .find((name) => exports[name] === value);
      if (name === undefined) problems.push(`${member} (${part}) is not an export of ${source}`);
      else names[member] = name;
    }
    parts.set(part, { module: relative(root, join(root, file)).split("\\").join("/"), exports: names });
  }
  const out = { parts, problems };
  bound.set(module, out);
  return out;
}
