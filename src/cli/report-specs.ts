// The specs a report covers by default: the project's own, and the built-in specs it built by name (which
// live in the install, so no folder of the project lists them; medbench.lock does).
import { readFileSync, realpathSync } from "../util/builtins.js";
import { relative, resolve } from "node:path";
import { projectSpecs } from "../specfile/project-specs.js";
import { installRoot } from "../util/paths.js";
import { openProject, specFileOf } from "../runner/project/project.js";

/** The project's specs/*.yaml, then each spec of the install that medbench.lock records (as paths the
 *  report reads: project-relative when the install is inside the project, else absolute). */
export function specsToReport(root: string): string[] {
  const own = projectSpecs(root);
  let recorded: string[];
  try {
    const lock = JSON.parse(readFileSync(resolve(root, "medbench.lock"), "utf8")) as { specs?: object };
    recorded = Object.keys(lock.specs ?? {});
  } catch {
    return own; // no lock (nothing built yet), or one the build itself will report on
  }
  const seen = new Set(own.map((file) => realpathSync(resolve(root, file))));
  const project = openProject(root);
  const install = realpathSync(installRoot());
  const builtIn: string[] = [];
  for (const name of recorded) {
    let file: string;
    try {
      file = realpathSync(specFileOf(project, name));
    } catch {
      continue; // a spec since removed: its runs are no report's
    }
    if (seen.has(file) || relative(install, file).startsWith("..")) continue;
    seen.add(file);
    const rel = relative(root, file);
    builtIn.push(rel.startsWith("..") ? file : rel);
  }
  return [...own, ...builtIn];
}
