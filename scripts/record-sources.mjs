#!/usr/bin/env node
// Records, at compile time, the sha256 of every TypeScript source the compiled dist/ was made from, and of
// every JSON data file of a task (tsc copies those a module imports), in dist/sources.json, so that
// medbench can refuse to run compiled code older than its sources.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const sources = {};
// tests/fixtures: the runner tests' fixture tasks (compiled with the rest, see tsconfig.json).
for (const top of ["src", "stages", "tasks", "tests/fixtures"]) {
  if (!existsSync(join(root, top))) continue;
  for (const e of readdirSync(join(root, top), { recursive: true, withFileTypes: true })) {
    const data = top === "tasks" && e.name.endsWith(".json");
    if (!e.isFile() || !(e.name.endsWith(".ts") || data)) continue;
    const file = join(e.parentPath, e.name);
    sources[relative(root, file).split("\\").join("/")] = createHash("sha256")
      .update(readFileSync(file))
      .digest("hex");
  }
}
const ordered = Object.fromEntries(Object.entries(sources).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join(root, "dist/sources.json"), JSON.stringify(ordered, null, 1) + "\n");
