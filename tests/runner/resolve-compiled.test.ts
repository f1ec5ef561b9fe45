// Compiled modules find each other by path (src/load/resolve-compiled.ts): the same file as Node's own
// resolver for every relative require in dist/, Node's answer for anything else, and the CLI's launcher
// sets it up before the CLI loads.
import { describe, expect, it } from "vitest";
import Module from "node:module";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
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
        [...readFileSync(file, "utf8").matchAll(RELATIVE_REQUIRE)].map((m) => ({ file, request: m[1]! })),
      );
    const byPath = pairs.filter(({ file, request }) => compiledFile(DIST, request, { filename: file }));
    expect(byPath.length).toBeGreaterThan(500);
    const differing = byPath.filter(
      ({ file, request }) => compiledFile(DIST, request, { filename: file }) !== nodeResolve(request, file),
    );
    expect(differing).toEqual([]);
  });

  it("leaves to Node what it does not resolve: a missing file, a folder, another tree, a package", () => {
    const parent = { filename: join(DIST, "src/cli/main.js") };
    expect(compiledFile(DIST, "./main.js", parent)).toBe(join(DIST, "src/cli/main.js"));
    expect(compiledFile(DIST, "./no-such-module.js", parent)).toBeNull();
    expect(compiledFile(DIST, "../load.js", { filename: join(DIST, "src/load/x/y.js") })).toBeNull();
    const folder = join(DIST, "src/cli/a-folder.js");
    mkdirSync(folder, { recursive: true });
    try {
      expect(compiledFile(DIST, "./a-folder.js", parent)).toBeNull();
    } finally {
      rmSync(folder, { recursive: true });
    }
    expect(compiledFile(DIST, "../../../package.json", parent)).toBeNull();
    expect(compiledFile(DIST, "../../../bin/medbench.js", parent)).toBeNull();
    expect(compiledFile(DIST, "./main.js", { filename: join(REPO, "scripts/x.js") })).toBeNull();
    expect(compiledFile(DIST, "yaml", parent)).toBeNull();
    expect(compiledFile(DIST, "./main.js", { filename: null })).toBeNull();
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
    // The resolver's own module loads its imports before it is set up.
    const setUp = join(DIST, "src/load/resolve-compiled.js");
    const fromDist = seen.filter((line) => line.split("\t")[1]!.startsWith(DIST) && !line.endsWith(setUp));
    // The launcher's own require of the resolver, the vendored bundles (.cjs), JSON files and built-ins.
    expect(seen.length).toBeGreaterThan(0);
    expect(fromDist.filter((line) => /^\.\.?\/.*\.js\t/.test(line))).toEqual([]);
  });
});
