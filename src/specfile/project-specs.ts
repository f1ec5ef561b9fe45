// The spec files of a project: every YAML file directly under its specs/ folder, as project paths, sorted.
import { existsSync, readdirSync } from "../util/builtins.js";
import { join } from "node:path";

export function projectSpecs(root: string): string[] {
  const dir = join(root, "specs");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => `specs/${name}`);
}
