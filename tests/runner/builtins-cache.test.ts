// A first build sets V8 flags as it runs (src/load/small-run-heap.ts: the young generation's growth factor,
// --expose-gc), and Node compiles each built-in loaded while a flag is away from its default without its
// code cache (about twice the CPU). Node's own count of what it compiled so (--expose-internals) says
// whether the built-ins a build loads after its first stage came from the cache. Against the fake server
// over real HTTP, so the HTTP client's built-ins load too (node:http: https, tls and zlib only for an
// https route or a compressed reply).
import { execa } from "execa";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";
import { BIN, cleanedAfterEach, Project } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";

describe("built-ins loaded by a build that sets V8 flags", () => {
  const { servers, projects } = cleanedAfterEach();

  // A built-in Node loads inside a call, with no require between (require.resolve's ES resolver for a
  // package's exports, fs's streams, a spawned process's IPC serialisation: internal/…), is not reached by
  // the hold's loader: about 1 ms of CPU. Each public built-in (a name code can require) is.
  it("come from Node's code cache, each one code can require", async () => {
    const fake = await startFake({});
    servers.push(fake);
    const p = new Project();
    projects.push(p);
    p.write("routes.yaml", `routes:\n${fakeRoute("fake", fake.url)}`);
    const preloads = ["builtins-cache.cjs", "loaded-modules.cjs"].flatMap((name) => [
      "-r",
      join(REPO, "tests/support", name),
    ]);
    const r = await execa("node", ["--expose-internals", ...preloads, BIN, ...Project.fakeBuildArgs()], {
      cwd: p.path(),
      reject: false,
      env: { NO_COLOR: "1" },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.requests).toBeGreaterThan(0);
    const uncached = r.stderr
      .split("--- compiled without cache\n")[1]!
      .split("---")[0]!
      .split("\n")
      .filter(Boolean);
    expect(uncached.filter((id) => builtinModules.includes(id))).toEqual([]);
    const loaded = r.stderr.split("--- loaded builtins\n")[1]!.split("\n");
    expect(loaded).toContain("NativeModule http");
    expect(loaded.filter((m) => /^NativeModule (https|tls|zlib)$/.test(m))).toEqual([]);
  });
});
