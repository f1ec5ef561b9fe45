import { resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** shared/ sits beside the clone (the session's and CI's layout). */
export function sharedDir(): string {
  for (const p of [process.env.MEDBENCH_SHARED, resolve(REPO, "../shared"), resolve(REPO, "../../shared")]) {
    if (p && existsSync(resolve(p, "golden"))) return p;
  }
  throw new Error("cannot find shared/ (set MEDBENCH_SHARED)");
}
