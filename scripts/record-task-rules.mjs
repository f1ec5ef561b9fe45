#!/usr/bin/env node
// Checks the built-in tasks' sources with the compiled rules (dist/src/runner/code/task-rules.js) at build
// time and writes what they found, by each source's role and sha256, to dist/task-rules.json: a first
// build of a built-in task then takes the facts from there instead of loading the TypeScript compiler
// (src/runner/code/rules-table.ts). A source edited since is not in the table, and is checked as it runs.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const require = createRequire(import.meta.url);
const { analyse } = require(join(root, "dist/src/runner/code/task-rules.js"));
const facts = {};
for (const task of readdirSync(join(root, "tasks"), { withFileTypes: true })) {
  if (!task.isDirectory()) continue;
  const folder = join(task.parentPath, task.name);
  for (const e of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".d.ts")) continue;
    const file = join(e.parentPath, e.name);
    const bytes = readFileSync(file);
    const isIndex = relative(folder, file) === "index.ts";
    const sha = createHash("sha256").update(bytes).digest("hex");
    facts[`${isIndex ? "task-rules-index" : "task-rules"} ${sha}`] = analyse(
      bytes.toString("utf8"),
      file,
      isIndex,
    );
  }
}
const ordered = Object.fromEntries(Object.entries(facts).sort(([a], [b]) => (a < b ? -1 : 1)));
const typescript = require("typescript/package.json").version;
writeFileSync(join(root, "dist/task-rules.json"), JSON.stringify({ typescript, facts: ordered }) + "\n");
