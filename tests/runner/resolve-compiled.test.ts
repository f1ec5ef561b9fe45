// Compiled modules find each other by path (src/load/resolve-compiled.ts): the same file as Node's own
// resolver for every relative require in dist/, Node's answer for anything else, and the CLI's launcher
// sets it up before the CLI loads.
import { describe, expect, it } from "vitest";
import Module from "node:module";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { execa } from "execa";
import { filesUnder, REPO } from "../support/helpers.js";
import { BIN, Project } from "../support/rig.js";
import { compiledFile } from "../../src/load/resolve-compiled.js";

const DIST = join(REPO, "dist") + sep;
const RELATIVE_REQUIRE = /\brequire\("(\.\.?\/[^"]+)"\)/g;
type NodeResolver = { _resolveFilename(request: string, parent: unknown): string };
const nodeResolve = (request: string, parent: string): string =>
  (Module as unknown as NodeResolver)._resolveFilename(request, {
    id: parent,
    filename: parent,
    paths: (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
      dirname(parent),
    ),
  });

describe("compiled modules resolved by path", () => {
  it("every relative require of a compiled module: the file Node's resolver gives", () => {
    const pairs = filesUnder(DIST)
      .filter((file) => file.endsWith(".js"))
      .flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(RELATIVE_REQUIRE)].map((match) => ({
          file,
          request: match[1]!,
        })),
      );
    const byPath = pairs.filter(({ file, request }) => compiledFile(DIST, request, { filename: file }));
    expect(byPath.length).toBeGreaterThan(500);
    const differing = byPath.filter(
      ({ file, request }) => compiledFile(DIST, request, { filename: file }) !== nodeResolve(request, file),
    );
    expect(differing).toEqual([]);
  });

  it("leaves to Node what it does not resolve: a missing file, a folder, another tree, a package", () => {
    // A compiled tree of its own, so that nothing is made inside dist/ while other tests read it.
    const root = mkdtempSync(join(tmpdir(), "medbench-compiled-")) + sep;
    mkdirSync(join(root, "src/cli/a-folder.js"), { recursive: true });
    writeFileSync(join(root, "src/cli/main.js"), "");
    writeFileSync(join(root, "outside.js"), "");
    const parent = { filename: join(root, "src/cli/main.js") };
    try {
      expect(compiledFile(root, "./main.js", parent)).toBe(join(root, "src/cli/main.js"));
      expect(compiledFile(root, "../../outside.js", parent)).toBe(join(root, "outside.js"));
      expect(compiledFile(root, "./no-such-module.js", parent)).toBeNull();
      expect(compiledFile(root, "./a-folder.js", parent)).toBeNull();
      expect(compiledFile(root, "../../../x.js", parent)).toBeNull(); // above the tree
      expect(compiledFile(root, "./main.js", { filename: join(REPO, "scripts/x.js") })).toBeNull();
      expect(compiledFile(root, "main.js", parent)).toBeNull(); // a package's name
      expect(compiledFile(root, "./main.json", parent)).toBeNull();
      expect(compiledFile(root, "./main.js", { filename: null })).toBeNull();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the launcher sets it up: no compiled .js module of a build reaches Node's resolver", async () => {
    const project = new Project();
    const r = await execa(
      "node",
      ["-r", join(REPO, "tests/support/resolves-seen.cjs"), BIN, "build", "specs/voice-command.yaml"],
      { cwd: project.dir, reject: false, env: { NO_COLOR: "1" } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const seen = String(r.stderr).split("--- resolved by node\n")[1]!.split("\n").filter(Boolean);
    const setUp = join(DIST, "src/load/resolve-compiled.js");
    const fromDist = seen.filter((line) => line.split("\t")[1]!.startsWith(DIST) && !line.endsWith(setUp));
    // The resolver's own import reaches Node before it is set up: the lines name dist/ as Node does.
    expect(seen).toContain(`../util/builtins.js\t${setUp}`);
    expect(fromDist.filter((line) => /^\.\.?\/.*\.js\t/.test(line))).toEqual([]);
  });
});
