import { resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The reference files the tests read, copied into the repo (tests/data/README.md says from where). */
export function testData(...parts: string[]): string {
  return resolve(REPO, "tests/data", ...parts);
}
