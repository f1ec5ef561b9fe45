import { dirname, isAbsolute, relative, resolve } from "node:path";
import { existsSync, readFileSync } from "./builtins.js";
import { consult } from "./consulted.js";

/** Whether `rel`, resolved under `base`, stays inside it (by its text; links are the caller's business). */
export function staysInside(base: string, rel: string): boolean {
  if (isAbsolute(rel)) return false;
  const path = relative(resolve(base), resolve(base, rel));
  return path === "" || (!path.startsWith("..") && !isAbsolute(path));
}

let root: string | null = null;

/** Where medbench itself is installed (stages/, tasks/, specs/spec.schema.json),
 *  whether run from dist/ or not: the folder of its package.json
 *  (dist/package.json, which only marks dist/ as CommonJS, has no name). */
export function installRoot(): string {
  if (root) return root;
  for (let dir = __dirname; ; ) {
    const manifest = resolve(dir, "package.json");
    consult(manifest);
    if (existsSync(manifest) && "name" in (JSON.parse(readFileSync(manifest, "utf8")) as object))
      return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("medbench: cannot find its own package.json");
    dir = up;
  }
}

/** What to do when the compiled code does not match its sources, or is missing: a checkout compiles itself;
 *  an installed package (no tsconfig.json, no compiler) is installed again. bin/medbench.js, which runs
 *  before any compiled code can, says the same. */
export function compileFix(root: string): string {
  return existsSync(resolve(root, "tsconfig.json"))
    ? `run \`npm run build\` in ${root} (it compiles and records the sources), ` +
        "then run this command again"
    : "install medbench again (npm install): this installed copy is incomplete or was edited";
}

export function medbenchVersion(): string {
  consult(resolve(installRoot(), "package.json"));
  return (JSON.parse(readFileSync(resolve(installRoot(), "package.json"), "utf8")) as { version: string })
    .version;
}
