// Where a build reads and writes: the project root, its cache and lock; paths kept inside the project.
import { realpathSync, existsSync } from "../../util/builtins.js";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { DiagnosticError } from "../../errors.js";
import { installRoot, staysInside } from "../../util/paths.js";
import { consult } from "../../util/consulted.js";

export interface Project {
  root: string;
  cacheDir: string;
  lockPath: string;
}

export function openProject(root: string, cacheDir?: string): Project {
  const abs = resolve(root);
  return { root: abs, cacheDir: resolve(abs, cacheDir ?? "cache"), lockPath: resolve(abs, "medbench.lock") };
}

/**
 * The folder a spec's file paths (inputs, the sample, pins) are relative to: the project root, or the
 * medbench install for one of its own specs run by name from another project (`medbench build
 * voice-command`), which reads its prompts and sample where they were installed instead of copies.
 */
export function specFilesRoot(project: Project, specFile: string): string {
  const builtIn = resolve(installRoot(), "specs");
  return dirname(resolve(specFile)) === builtIn ? installRoot() : project.root;
}

/** The spec's path as the lock names it: relative to the project, with forward slashes. */
export function projectPath(project: Project, file: string): string {
  const rel = relative(project.root, resolve(file)).split(sep).join("/");
  // A spec of an install outside the project (a global or linked medbench) is named as in medbench's own
  // repository, specs/<name>.yaml, not by a path that only this machine has; specFileOf() reads it back.
  const base = specFilesRoot(project, file);
  return rel.startsWith("../") && base !== project.root
    ? relative(base, resolve(file)).split(sep).join("/")
    : rel;
}

/** The spec file a lock or result names (projectPath()): in the project, else a spec of the install. */
export function specFileOf(project: Project, specPath: string): string {
  const here = resolve(project.root, specPath);
  consult(here);
  if (existsSync(here)) return here;
  const installed = resolve(installRoot(), specPath);
  return dirname(installed) === resolve(installRoot(), "specs") && existsSync(installed) ? installed : here;
}

/** Resolves `rel` under `base` and refuses anything that leaves it (.. or a symlink out). */
export function insideDir(base: string, rel: string, what: string, specFile: string): string {
  const fail = (message: string) =>
    new DiagnosticError([
      { file: specFile, message, fix: `keep ${what} paths relative and inside ${base}` },
    ]);
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
