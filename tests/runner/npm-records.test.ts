// An installed package is keyed by all its files: by npm's own record of them (the hidden lockfile
// node_modules/.package-lock.json and package-lock.json's integrity, the sha512 of the tarball) while npm's
// rule says nothing changed since the install, without reading its files; otherwise by the sha256 of every
// file it holds, data files too. On small installs written here, as npm lays them out.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codeIdentity } from "../../src/runner/code/code.js";

const INTEGRITY = { lexpkg: "sha512-bGV4cGtnIDEuMC4w", helper: "sha512-aGVscGVyIDIuMC4w" };

describe("installed packages in a stage's key", () => {
  const base = mkdtempSync(join(tmpdir(), "medbench-npm-"));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  let root = "";
  let n = 0;
  const write = (rel: string, text: string) => {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  const lockEntries = (integrity = INTEGRITY.lexpkg) => ({
    "node_modules/lexpkg": { version: "1.0.0", integrity, dependencies: { helper: "2.0.0" } },
    "node_modules/helper": { version: "2.0.0", integrity: INTEGRITY.helper },
  });
  /** The hidden lockfile npm writes last, its mtime after every package folder's. */
  const npmInstalled = (entries: object) => {
    write("node_modules/.package-lock.json", JSON.stringify({ lockfileVersion: 3, packages: entries }));
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "node_modules/.package-lock.json"), later, later);
  };
  const pkg = (name: string, version: string, files: Record<string, string>) => {
    write(`node_modules/${name}/package.json`, JSON.stringify({ name, version, main: "index.js" }));
    for (const [rel, text] of Object.entries(files)) write(`node_modules/${name}/${rel}`, text);
  };
  const key = () => codeIdentity(root, ["dist/a.js"]).packages;

  beforeEach(() => {
    root = join(base, `p${n++}`);
    write("dist/a.js", 'const lex = require("lexpkg");\n');
    write(
      "package-lock.json",
      JSON.stringify({ lockfileVersion: 3, packages: { "": {}, ...lockEntries() } }),
    );
    pkg("lexpkg", "1.0.0", {
      "index.js":
        'require("helper");\nmodule.exports = require("fs").readFileSync(__dirname + "/words.json");\n',
      "words.json": '["stop"]',
    });
    pkg("helper", "2.0.0", { "index.js": "exports.x = 1;\n" });
  });

  it("npm installed it and nothing changed: its version and integrity, and those of what it loads", () => {
    npmInstalled(lockEntries());
    expect(key()).toEqual({ helper: `2.0.0 ${INTEGRITY.helper}`, lexpkg: `1.0.0 ${INTEGRITY.lexpkg}` });
  });

  it("no hidden lockfile (not npm's install): every file of it, the data file too", () => {
    const before = key();
    expect(before.lexpkg).toMatch(/^1\.0\.0 sha256:[0-9a-f]{64}$/);
    write("node_modules/lexpkg/words.json", '["stop", "go"]'); // read by the package, loaded by no code
    const after = key();
    expect(after.lexpkg).not.toBe(before.lexpkg);
    expect(after.helper).toBe(before.helper);
  });

  it("a package folder newer than npm's record is read, as npm itself would not trust the record", () => {
    npmInstalled(lockEntries());
    const later = new Date(Date.now() + 120_000);
    utimesSync(join(root, "node_modules/lexpkg"), later, later);
    expect(key().lexpkg).toMatch(/ sha256:/);
  });

  it("a hidden lockfile naming another tarball than package-lock.json: the files are read", () => {
    npmInstalled(lockEntries("sha512-b3RoZXI="));
    expect(key().lexpkg).toMatch(/ sha256:/);
  });
});
