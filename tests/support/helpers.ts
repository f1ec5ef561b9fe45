import { readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
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

/** The items of the voice-command sample shipped with its spec: a line a command in its benchmark files
 *  (an expected count is read from the sample, never written in). */
export const VOICE_SAMPLE_ITEMS = filesUnder(resolve(REPO, "specs/voice-command/sample/benchmark"))
  .filter((file) => file.endsWith(".jsonl"))
  .reduce((sum, file) => sum + readFileSync(file, "utf8").trim().split("\n").length, 0);
