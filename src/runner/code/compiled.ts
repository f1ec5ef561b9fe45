// Compiled code runs, sources are edited: refuse to run when the two disagree, rather than run old code
// under a key that looks fresh. dist/sources.json (scripts/record-sources.mjs) records what was compiled.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join, relative } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { DiagnosticError, type Diagnostic } from "../../errors.js";
import { filesUnder } from "./code.js";
import { factsOf } from "../../hash/code-memo.js";
import { consult } from "../../util/consulted.js";
import { compileFix } from "../../util/paths.js";

// tests/fixtures: task folders for the runner's own tests (absent from an installed package).
const SOURCE_DIRS = ["src", "stages", "tasks", "tests/fixtures"];
let checked = false;

export function checkCompiled(root: string): void {
  if (checked) return;
  const manifestPath = join(root, "dist/sources.json");
  consult(manifestPath);
  const fix = () => compileFix(root); // only when refusing: a build that runs stats no more than it reads
  if (!existsSync(manifestPath))
    throw new DiagnosticError([
      { file: manifestPath, message: "dist/ was not compiled by `npm run build`", fix: fix() },
    ]);
  const compiled = JSON.parse(readFileSync(manifestPath, "utf8")) as Record<string, string>;
  const problems: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const dir of SOURCE_DIRS) {
    for (const file of filesUnder(join(root, dir))) {
      // filesUnder lists paths under root as root/…: the rest is the relative path (relative() resolved
      // both paths again, for each of 400 sources)
      const rel = (file.startsWith(`${root}/`) ? file.slice(root.length + 1) : relative(root, file))
        .split("\\")
        .join("/");
      // A task's JSON data: tsc copies each one a module imports into dist/.
      if (!(file.endsWith(".ts") || (rel.startsWith("tasks/") && file.endsWith(".json")))) continue;
      seen.add(rel);
      const was = compiled[rel];
      if (was === undefined)
        problems.push({ file: rel, message: "this source has never been compiled", fix: fix() });
      else if (was !== factsOf(file, "sha256", (bytes) => sha256Hex(bytes)))
        problems.push({ file: rel, message: "this source changed since dist/ was compiled", fix: fix() });
    }
  }
  for (const rel of Object.keys(compiled))
    if (!seen.has(rel) && existsSync(join(root, SOURCE_DIRS.find((dir) => rel.startsWith(`${dir}/`)) ?? "")))
      problems.push({ file: rel, message: "this source was removed since dist/ was compiled", fix: fix() });
  if (problems.length) throw new DiagnosticError(problems);
  checked = true;
}
