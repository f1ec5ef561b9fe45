#!/usr/bin/env node
// The code memo a build of the bundled voice-command sample leaves (src/hash/code-memo.ts: each install
// file's sha256, a compiled module's imports, npm's records, by the file's stat signature), made as medbench
// is built and kept in dist/code-memo.json: a project's first build starts from it instead of reading and
// hashing medbench's own code (about 50 ms of a 2,070-item first build's start). Only the entries of files
// under this install are kept; each is trusted as the project's own memo is, while its file's size, times
// and inode are the same (a file edited since is read again). The memo trusts no stat younger than 2 s: the
// build waits until the files it just wrote are that old.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
// The memo's seal, as src/hash/sealed.ts makes and reads it (compiled by the build before this runs).
const { sealed, unseal } = createRequire(import.meta.url)(join(root, "dist/src/hash/sealed.js"));
const SETTLE_MS = 2_100;

let newest = 0;
for (const e of readdirSync(join(root, "dist"), { recursive: true, withFileTypes: true }))
  if (e.isFile()) {
    const st = statSync(join(e.parentPath, e.name));
    newest = Math.max(newest, st.mtimeMs, st.ctimeMs);
  }
const wait = newest + SETTLE_MS - Date.now();
if (wait > 0) await new Promise((done) => setTimeout(done, wait));

const seedFile = join(root, "dist/code-memo.json");
// The user's own medbench settings (a remote cache, a release folder) are not this build's.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith("MEDBENCH_")),
);
const project = mkdtempSync(join(tmpdir(), "medbench-seed-"));
try {
  cpSync(join(root, "specs"), join(project, "specs"), { recursive: true });
  execFileSync(
    process.execPath,
    [join(root, "bin/medbench.js"), "build", "specs/voice-command.yaml", "--quiet"],
    {
      cwd: project,
      env,
      // Its notice on the bundled sample is no news here; a failure throws with its stderr, as text.
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
    },
  );
  const opened = unseal(readFileSync(join(project, "cache/code-memo.json"), "utf8"));
  if ("problem" in opened) throw new Error(`the sample build's code memo: ${opened.problem}`);
  const { version, entries } = JSON.parse(opened.body);
  const mine = Object.fromEntries(Object.entries(entries).filter(([id]) => id.startsWith(`${root}/`)));
  // A line an entry (src/hash/code-memo.ts parses each when it is asked for).
  const lines = Object.entries(mine).map(([id, entry]) => `${JSON.stringify(id)}\t${JSON.stringify(entry)}`);
  const body = [JSON.stringify({ version }), ...lines].join("\n");
  writeFileSync(seedFile, sealed(body));
} catch (e) {
  // Only a head start: without it a project's first build reads the install's code itself. A checkout in the
  // middle of a change may not build the sample; compiling it must not fail for that.
  rmSync(seedFile, { force: true });
  const said = String(e.stderr || e.message)
    .trim()
    .split("\n")[0];
  process.stderr.write(`medbench: no code memo seeded (the sample's build failed: ${said})\n`);
} finally {
  rmSync(project, { recursive: true, force: true });
}
