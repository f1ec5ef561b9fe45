// A build notes every path it consults (src/util/consulted.ts) as resolve() makes it; a path already
// absolute and normal is noted as it is, without resolve() walking it (over a thousand a build).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO } from "../support/helpers.js";
import { Project } from "../support/rig.js";
import { normalAbsolute } from "../../src/util/consulted.js";
import { joinRelative } from "../../src/runner/code/code.js";

describe("consulted paths", () => {
  it("a path taken as it is is what resolve() makes of it", () => {
    const paths = [
      "/a/b",
      "/a/.hidden/b",
      "/a/b.c",
      "/a/..b",
      "/a/b..",
      "/",
      "/a/./b",
      "/a/../b",
      "/a//b",
    ].concat(["/a/b/", "/a/b/.", "/a/b/..", "a/b", "./a", "", "/a/.package-lock.json"]);
    for (const path of paths) if (normalAbsolute(path)) expect(resolve(path), path).toBe(path);
    expect(paths.filter(normalAbsolute)).toEqual([
      "/a/b",
      "/a/.hidden/b",
      "/a/b.c",
      "/a/..b",
      "/a/b..",
      "/a/.package-lock.json",
    ]);
  });

  it("a relative import joined to its folder is what resolve() makes of it", () => {
    const dirs = ["/a/b/c", "/a", "/a/b/", "/a/./b", "rel/dir", "/a/.x"];
    const specs = [
      "./x.js",
      "../x.js",
      "../../x.js",
      "../../../../x",
      "./../y/x.js",
      "./",
      ".",
      "..",
      "./a/../b",
    ];
    for (const dir of dirs)
      for (const spec of specs) expect(joinRelative(dir, spec), `${dir} + ${spec}`).toBe(resolve(dir, spec));
  });

  it("a build resolves only the consulted paths that are not absolute and normal", async () => {
    const p = new Project();
    try {
      const noted = async (from: string) => {
        const out = p.path("resolves.json");
        const r = await p.run(["build", "specs/voice-command.yaml", "--quiet", "--rekey"], {
          NODE_OPTIONS: `--require ${join(REPO, "tests/support/resolves-from.cjs")}`,
          RESOLVES_FROM: from,
          RESOLVES_OUT: out,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        return JSON.parse(readFileSync(out, "utf8")) as string[];
      };
      expect((await noted("consulted\\.js:")).filter(normalAbsolute)).toEqual([]);
      // nor a compiled module's relative imports (src/runner/code/code.ts, joined to their folder)
      expect(await noted("at (resolveRelative|joinRelative) ")).toEqual([]);
    } finally {
      p.remove();
    }
  });
});
