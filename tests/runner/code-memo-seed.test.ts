// A project's first command starts from the code memo medbench's own build left (dist/code-memo.json,
// scripts/seed-code-memo.mjs): the install's sources, whose sha256 it checks against dist/sources.json,
// are not read while their stat signatures are the ones the build saw (tests/support/fs-trace.mjs notes
// every read). Without the seed, a first `status` read each of them.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";
import { cleanedAfterEach, Project } from "../support/rig.js";

const FS_TRACE = pathToFileURL(resolve(REPO, "tests/support/fs-trace.mjs")).href;

describe("the code memo seeded by medbench's build", () => {
  const { projects } = cleanedAfterEach();

  it("spares a project's first command reading medbench's own sources", async () => {
    const p = new Project();
    projects.push(p);
    const out = p.path("fs.json");
    const r = await p.run(["status", "specs/voice-command.yaml"], {
      NODE_OPTIONS: `--import ${FS_TRACE}`,
      FS_TRACE_OUT: out,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const seen = JSON.parse(readFileSync(out, "utf8")) as Record<string, string[]>;
    const sources = Object.keys(seen).filter((path) => path.startsWith(join(REPO, "src/")));
    expect(sources.length).toBeGreaterThan(100); // each stated, as the seed's signatures are checked
    const read = sources.filter((path) => seen[path]!.includes("readFileSync"));
    expect(read).toEqual([]);
  });
});
