// Where a build reads and writes: the project root, its cache and lock; paths kept inside the project.
import { realpathSync, existsSync } from "../util/builtins.js";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { DiagnosticError } from "../spec/diagnostic.js";
import { staysInside } from "../util/paths.js";
import { consult } from "../util/consulted.js";

export interface Project {
  root: string;
  cacheDir: string;
  lockPath: string;
}

export function openProject(root: string, cacheDir?: string): Project {
  const abs = resolve(root);
  return { root: abs, cacheDir: resolve(abs, cacheDir ?? "cache"), lockPath: resolve(abs, "medbench.lock") };
}

/** The spec's path as the lock names it: relative to the project, with forward slashes. */
export function projectPath(project: Project, file: string): string {
  return relative(project.root, resolve(file)).split(sep).join("/");
}

/** Resolves `rel` under `base` and refuses anything that leaves it (.. or a symlink out). */
export function insideDir(base: string, rel: string, what: string, specFile: string): string {
  const fail = (message: string) =>
    new DiagnosticError([{ file: specFile, message, fix: `keep ${what} paths relative and inside ${base}` }]);
  if (isAbsolute(rel)) throw fail(`${what} path ${rel} is absolute`);
  const target = resolve(base, rel);
  consult(target);
  if (!staysInside(base, rel)) throw fail(`${what} path ${rel} escapes ${base}`);
  // The folders on the way, so that one replaced by a link out (the check below) changes what was consulted.
  for (let dir = dirname(target); dir.startsWith(resolve(base) + sep); dir = dirname(dir)) consult(dir);
  if (
    existsSync(target) &&
    !staysInside(realpathSync(base), relative(realpathSync(base), realpathSync(target)))
  ) {
    throw fail(`${what} path ${rel} leads out of ${base} through a link`);
  }
  return target;
}
