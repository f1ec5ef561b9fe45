import { readdirSync, statSync, utimesSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The reference files the tests read, copied into the repo (tests/data/README.md says from where). */
export function testData(...parts: string[]): string {
  return resolve(REPO, "tests/data", ...parts);
}

/** Every file under a folder, recursively. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const f = join(d, n);
      if (statSync(f).isDirectory()) walk(f);
      else out.push(f);
    }
  };
  walk(dir);
  return out;
}

/** Every file under a folder given this access and modification time (as an old download has). */
export function age(dir: string, when: Date): void {
  for (const f of filesUnder(dir)) utimesSync(f, when, when);
}
