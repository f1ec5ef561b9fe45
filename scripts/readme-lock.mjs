#!/usr/bin/env node
// Regenerates medbench.lock so that README.md's commands leave it as committed in a fresh clone: every build
// line of the README's "Commands" section (all but the two that need what a clone lacks) is run in order, as
// tests/cli/readme-commands.test.ts runs them, in a copy of the clone (specs/, examples/, scripts/ and the
// committed medbench.lock), with the fake server on port 8000 as the README starts it; the copy's lock then
// replaces the repo's. Entries of builds the README does not make (mtsamples with --data-dir) are kept as
// they were. Usage, from the top of the repo after `npm run build`, port 8000 free:
//   node scripts/readme-lock.mjs
import { execa } from "execa";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const repo = resolve(import.meta.dirname, "..");
const bin = join(repo, "bin/medbench.js");
const readme = readFileSync(join(repo, "README.md"), "utf8");
const start = readme.indexOf("\n## Commands\n");
const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
const lines = section
  .split("\n")
  .filter((line) => /^ {4}(npx medbench|node scripts\/)/.test(line))
  .map((line) => line.trim().split(/\s+#\s+/))
  .filter(([, comment = ""]) => !/\bneeds the (KHDP release|network)\b/.test(comment))
  .map(([command]) => command.split(/\s+/));

const project = mkdtempSync(join(tmpdir(), "medbench-readme-lock-"));
for (const dir of ["specs", "examples", "scripts"])
  cpSync(join(repo, dir), join(project, dir), { recursive: true });
cpSync(join(repo, "medbench.lock"), join(project, "medbench.lock"));
let server = null;
try {
  for (const args of lines) {
    if (args[0] === "node") {
      server = execa("node", args.slice(1), { cwd: project, reject: false });
      await new Promise((ready) => server.stdout.on("data", (d) => String(d).includes(" on ") && ready()));
      continue;
    }
    if (args[2] !== "build") continue; // only builds write the lock
    const run = await execa("node", [bin, ...args.slice(2)], { cwd: project, reject: false });
    console.log(`${run.exitCode === 0 ? "ok  " : "FAIL"} ${args.join(" ")}`);
    if (run.exitCode !== 0) throw new Error(run.stderr);
  }
  cpSync(join(project, "medbench.lock"), join(repo, "medbench.lock"));
  console.log("medbench.lock written: commit it");
} finally {
  server?.kill();
  rmSync(project, { recursive: true, force: true });
}
