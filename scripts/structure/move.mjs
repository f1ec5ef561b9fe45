#!/usr/bin/env node
// Moves files with `git mv` and rewrites every path that names a moved file: relative imports (`import`,
// `export … from`, `import()`, `require()`, vi.mock and the like) in src, stages, tasks, tests, scripts and
// bin, and repository paths written as text ("dist/src/runner/cache.js", "src/spec/load.ts") there and in
// the reference docs. Usage: node scripts/structure/move.mjs MAPPING.json... (applied in their order).
// A mapping is {"why": …, "moves": {"old/file.ts": "new/file.ts", "old/folder/": "new/folder/"}}.
// It can run again after other work is merged: a file already at its new place is left there, and imports
// of its old place (in files added since) are still rewritten; a second run changes nothing.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

let REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CODE_ROOTS = ["src", "stages", "tasks", "tests", "scripts", "bin"];
const TEXT_ROOTS = [...CODE_ROOTS, "docs", "README.md"];
const CODE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const TEXT_FILE = /\.(ts|mts|cts|js|mjs|cjs|md|json|sh|yaml)$/;
const SKIPPED = new Set([
  "node_modules",
  "dist",
  "test-artifacts",
  ".git",
  "tests/data",
  "scripts/structure",
]);
const EXTENSION = /\.(ts|mts|cts|js|mjs|cjs|d\.ts)$/;

// A relative specifier where a module is named: from "…", import "…", import("…"), require("…"),
// vi.mock("…"), vi.doMock, vi.importActual, vi.unmock.
const SPECIFIER = new RegExp(
  String.raw`(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|` +
    String.raw`\bvi\.(?:mock|doMock|unmock|importActual)\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*)\2`,
  "g",
);
// A repository path written as text: src/… or tests/…, optionally under dist/, not part of a longer path.
const REPO_PATH = /(?<![\w.\/@-])((?:dist\/)?)((?:src|tests)\/[\w.\/-]*[\w\/])/g;
// The same in quoted pieces, as path.join takes them.
const PIECES = /(?:"dist",\s*)?"(?:src|tests)"(?:,\s*"[\w.-]+")+/g;

/** Repository-relative paths (posix) of the files under `roots` that `accept` keeps. */
function filesUnder(roots, accept) {
  const out = [];
  const walk = (rel) => {
    if (!statSync(join(REPO, rel)).isDirectory()) return void (accept.test(rel) && out.push(rel));
    for (const name of readdirSync(join(REPO, rel))) {
      const path = posix.join(rel, name);
      if (!SKIPPED.has(name) && !SKIPPED.has(path)) walk(path);
    }
  };
  for (const root of roots) if (existsSync(join(REPO, root))) walk(root);
  return out;
}

/** A mapping's moves as {from, to, folder}: folder moves end with "/". */
export function readMoves(file) {
  const { moves } = JSON.parse(readFileSync(file, "utf8"));
  return Object.entries(moves).map(([from, to]) => {
    const folder = from.endsWith("/");
    if (folder !== to.endsWith("/")) throw new Error(`${file}: ${from} -> ${to}: a folder maps to a folder`);
    return { from, to, folder };
  });
}

/** Where a repository path (a file, with or without its extension, or a folder) lands, or null. */
export function movedPath(moves, path) {
  const bare = path.replace(EXTENSION, "");
  for (const move of moves) {
    if (move.folder) {
      if (path.startsWith(move.from)) return move.to + path.slice(move.from.length);
      if (`${path}/` === move.from) return move.to.slice(0, -1);
      continue;
    }
    if (bare === move.from.replace(EXTENSION, ""))
      return move.to.replace(EXTENSION, "") + path.slice(bare.length);
  }
  return null;
}

/** The files each move takes: a folder's files as git lists them (tracked and new). */
function plannedMoves(moves) {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO,
    encoding: "utf8",
  })
    .split("\n")
    .filter((path) => path && existsSync(join(REPO, path)));
  const planned = [];
  for (const move of moves) {
    const sources = move.folder ? listed.filter((path) => path.startsWith(move.from)) : [move.from];
    for (const from of sources)
      planned.push({ from, to: move.folder ? move.to + from.slice(move.from.length) : move.to });
  }
  return planned;
}

/** Moves what is still at its old place; returns new path -> old path of the files moved now. */
function moveFiles(planned, say) {
  const movedNow = new Map();
  for (const { from, to } of planned) {
    const there = existsSync(join(REPO, from));
    const here = existsSync(join(REPO, to));
    if (!there) continue; // moved before, or never there
    if (here) {
      say(`both ${from} and ${to} exist: left as they are (merge them by hand)`);
      continue;
    }
    execFileSync("mkdir", ["-p", dirname(join(REPO, to))]);
    const tracked = execFileSync("git", ["ls-files", "--", from], { cwd: REPO, encoding: "utf8" }).trim();
    if (tracked) execFileSync("git", ["mv", from, to], { cwd: REPO });
    else execFileSync("mv", [join(REPO, from), join(REPO, to)]);
    movedNow.set(to, from);
  }
  return movedNow;
}

const asRelative = (fromDir, target) => {
  const rel = posix.relative(fromDir, target);
  return rel.startsWith(".") ? rel : `./${rel}`;
};

/** A file's text with each relative specifier re-aimed at where its module is now. */
export function rewriteSpecifiers(text, file, oldFile, moves) {
  return text.replace(SPECIFIER, (whole, lead, quote, specifier) => {
    const target = posix.normalize(posix.join(posix.dirname(oldFile), specifier));
    const moved = movedPath(moves, target);
    if (moved === null && file === oldFile) return whole;
    const landed = moved ?? target;
    if (moved === null && !targetExists(landed)) return whole; // an example in a string, not an import
    const trailing = specifier.endsWith("/") && !landed.endsWith("/") ? "/" : "";
    const next = asRelative(posix.dirname(file), landed) + trailing;
    return next === specifier ? whole : `${lead}${quote}${next}${quote}`;
  });
}

function targetExists(path) {
  const bare = path.replace(EXTENSION, "");
  return [path, `${bare}.ts`, `${bare}.js`, `${bare}.mjs`, `${bare}/index.ts`].some((candidate) =>
    existsSync(join(REPO, candidate)),
  );
}

/** Text with each repository path of a moved file (or folder) written at its new place: whole, or in
 *  quoted pieces (`"dist", "src", "runner", "status.js"`). */
export function rewriteRepoPaths(text, moves) {
  const whole = text.replace(REPO_PATH, (found, dist, path) => {
    const moved = movedPath(moves, path);
    return moved === null ? found : `${dist}${moved}`;
  });
  return whole.replace(PIECES, (found) => {
    const pieces = [...found.matchAll(/"([^"]+)"/g)].map((match) => match[1]);
    const dist = pieces[0] === "dist" ? pieces.shift() : null;
    const moved = movedPath(moves, pieces.join("/"));
    if (moved === null) return found;
    return [...(dist ? [dist] : []), ...moved.split("/")].map((piece) => `"${piece}"`).join(", ");
  });
}

const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Lines that still name an old place in a way this script does not rewrite (a path built in pieces). */
function leftovers(files, moves) {
  const patterns = moves.map((move) => {
    const parts = move.from.replace(EXTENSION, "").replace(/\/$/, "").split("/");
    const whole = escaped(parts.join("/"));
    const pieces = parts
      .slice(-2)
      .map((part) => escaped(part))
      .join(`",\\s*"`);
    const tail = escaped(parts.slice(-2).join("/"));
    const end = move.folder ? "(?![\\w-])" : "(?![\\w/-])";
    return new RegExp(`(?<![\\w-])${whole}${end}|${pieces}|(?<![\\w/.-])${tail}${end}`);
  });
  const found = [];
  for (const file of files) {
    const lines = readFileSync(join(REPO, file), "utf8").split("\n");
    lines.forEach((line, index) => {
      if (patterns.some((pattern) => pattern.test(line))) found.push(`${file}:${index + 1}: ${line.trim()}`);
    });
  }
  return found;
}

/** Removes the folders a move left empty. */
function removeEmptyFolders(movedNow) {
  for (const old of movedNow.values()) {
    for (let dir = dirname(old); dir !== "." && dir !== ""; dir = dirname(dir)) {
      const path = join(REPO, dir);
      if (!existsSync(path) || readdirSync(path).length > 0) break;
      rmdirSync(path);
    }
  }
}

/** A longer import may need another line: the project's formatter, when installed, lays out what changed. */
function formatted(files, say) {
  const prettier = join(REPO, "node_modules/.bin/prettier");
  if (files.length === 0 || !existsSync(prettier)) return;
  try {
    execFileSync(prettier, ["--write", "--log-level", "warn", ...files], { cwd: REPO, stdio: "pipe" });
  } catch (e) {
    say(`  prettier failed on the rewritten files: ${String(e.stderr ?? e.message).trim()}`);
  }
}

const MAX_COLUMNS = 110;

/** Lines a longer path made too long for the project's style (a comment prettier does not wrap). */
function longLines(files, moves) {
  const landed = moves.map((move) => move.to.replace(EXTENSION, ""));
  const named = (line) => landed.some((path) => line.includes(path));
  return files.flatMap((file) =>
    readFileSync(join(REPO, file), "utf8")
      .split("\n")
      .flatMap((line, index) => (line.length > MAX_COLUMNS && named(line) ? [`${file}:${index + 1}`] : [])),
  );
}

/** Applies one mapping file to the repository at `repo`; `say` prints what was done and what was left. */
export function applyMapping(mappingFile, repo = REPO, say = console.log) {
  REPO = repo;
  const moves = readMoves(mappingFile);
  const movedNow = moveFiles(plannedMoves(moves), say);
  removeEmptyFolders(movedNow);
  const rewritten = [];
  for (const file of filesUnder(TEXT_ROOTS, TEXT_FILE)) {
    const oldFile = movedNow.get(file) ?? file;
    const text = readFileSync(join(REPO, file), "utf8");
    let next = CODE_FILE.test(file) ? rewriteSpecifiers(text, file, oldFile, moves) : text;
    next = rewriteRepoPaths(next, moves);
    if (next !== text) {
      writeFileSync(join(REPO, file), next);
      rewritten.push(file);
    }
  }
  formatted(rewritten, say);
  const name = relative(REPO, mappingFile) || mappingFile;
  say(`${name}: ${movedNow.size} files moved, ${rewritten.length} files rewritten`);
  for (const line of longLines(rewritten, moves)) say(`  over ${MAX_COLUMNS} columns now: ${line}`);
  for (const line of leftovers(filesUnder(TEXT_ROOTS, TEXT_FILE), moves)) say(`  not rewritten: ${line}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mappings = process.argv.slice(2);
  if (mappings.length === 0) {
    console.error("usage: node scripts/structure/move.mjs MAPPING.json...");
    process.exit(2);
  }
  for (const mapping of mappings) applyMapping(resolve(mapping));
}
