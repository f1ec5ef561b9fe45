import { dirname, isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath, existsSync, readFileSync } from "./builtins.js";
import { consult } from "./consulted.js";

/** Where medbench itself is installed (stages/, tasks/, specs/spec.schema.json), whether run from dist/ or not. */
/** Whether `rel`, resolved under `base`, stays inside it (by its text; links are the caller's business). */
export function staysInside(base: string, rel: string): boolean {
  if (isAbsolute(rel)) return false;
  const r = relative(resolve(base), resolve(base, rel));
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

let root: string | null = null;

export function installRoot(): string {
  if (root) return root;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; ) {
    const manifest = resolve(dir, "package.json");
    consult(manifest);
    if (existsSync(manifest)) return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("medbench: cannot find its own package.json");
    dir = up;
  }
}

export function medbenchVersion(): string {
  consult(resolve(installRoot(), "package.json"));
  return (JSON.parse(readFileSync(resolve(installRoot(), "package.json"), "utf8")) as { version: string })
    .version;
}
