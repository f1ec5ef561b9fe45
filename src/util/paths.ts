import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";

/** Where medbench itself is installed (stages/, tasks/, specs/spec.schema.json), whether run from dist/ or not. */
export function installRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(resolve(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("medbench: cannot find its own package.json");
    dir = up;
  }
  return dir;
}
