// A build notes every path it consults (src/util/consulted.ts) as resolve() makes it; a path already
// absolute and normal is noted as it is, without resolve() walking it (over a thousand a build).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO } from "../support/helpers.js";
import { Project } from "../support/rig.js";
import { normalAbsolute } from "../../src/util/consulted.js";

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

  it("a build resolves only the consulted paths that are not absolute and normal", async () => {
    const p = new Project();
    try {
      const out = p.path("resolves.json");
      const r = await p.run(["build", "specs/voice-command.yaml", "--quiet"], {
        NODE_OPTIONS: `--require ${join(REPO, "tests/support/resolves-from.cjs")}`,
        RESOLVES_FROM: "consulted.js",
        RESOLVES_OUT: out,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const resolved = JSON.parse(readFileSync(out, "utf8")) as string[];
      expect(resolved.filter(normalAbsolute)).toEqual([]);
    } finally {
      p.remove();
    }
  });
});
