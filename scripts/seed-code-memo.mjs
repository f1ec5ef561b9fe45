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
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const SETTLE_MS = 2_100;

let newest = 0;
for (const e of readdirSync(join(root, "dist"), { recursive: true, withFileTypes: true }))
  if (e.isFile()) {
    const st = statSync(join(e.parentPath, e.name));
    newest = Math.max(newest, st.mtimeMs, st.ctimeMs);
  }
const wait = newest + SETTLE_MS - Date.now();
if (wait > 0) await new Promise((done) => setTimeout(done, wait));

const project = mkdtempSync(join(tmpdir(), "medbench-seed-"));
try {
  cpSync(join(root, "specs"), join(project, "specs"), { recursive: true });
  execFileSync(
    process.execPath,
    [join(root, "bin/medbench.js"), "build", "specs/voice-command.yaml", "--quiet"],
    {
      cwd: project,
      // Its notice on the bundled sample is no news here; a failure throws with its stderr, as text.
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
    },
  );
  const text = readFileSync(join(project, "cache/code-memo.json"), "utf8");
  const { version, entries } = JSON.parse(text.slice(text.indexOf("\n") + 1));
  const mine = Object.fromEntries(Object.entries(entries).filter(([id]) => id.startsWith(`${root}/`)));
  // A line an entry (src/hash/code-memo.ts parses each when it is asked for).
  const lines = Object.entries(mine).map(([id, entry]) => `${JSON.stringify(id)}\t${JSON.stringify(entry)}`);
  const body = [JSON.stringify({ version }), ...lines].join("\n");
  const seal = `medbench-sealed sha256:${createHash("sha256").update(body).digest("hex")}\n`;
  writeFileSync(join(root, "dist/code-memo.json"), seal + body);
} finally {
  rmSync(project, { recursive: true, force: true });
}
