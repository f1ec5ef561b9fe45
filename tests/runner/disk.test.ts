// A full disk never tears a result. The disk is really full: the CLI runs in a private
// mount namespace (`unshare -rm`, no root needed where user namespaces are enabled) with a small tmpfs
// mounted on the project's results/, so every write there meets the kernel's ENOSPC. On the fixture task
// (tests/fixtures/README.md): its result is five small files, each one tmpfs page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { execaSync } from "execa";
import { BIN, Project, SUMS_SPECS } from "../support/rig.js";
import { inMountNamespace, namespacesWork } from "../support/small-disk.js";

const SPEC = "specs/sums.yaml";
const RESULT = "results/fixture-sums/medbench_calculator";
// A tmpfs file no larger than a page takes one page.
const PAGE_KB = Number(execaSync("getconf", ["PAGESIZE"]).stdout.trim()) / 1024;

/** Runs `medbench build` with a tmpfs of `kb` KiB on results/ holding a copy of `seed` (a folder of the
 *  project, or null); what results/ holds afterwards is copied to `after/`. */
async function buildOnSmallDisk(p: Project, kb: number, seed: string | null) {
  rmSync(p.path("after"), { recursive: true, force: true });
  for (const f of ["rc.txt", "stderr.txt"]) rmSync(p.path(f), { force: true }); // never an earlier run's
  mkdirSync(p.path("results"), { recursive: true });
  mkdirSync(p.path("after"));
  const commands = [
    `mount -t tmpfs -o size=${kb}k tmpfs results`,
    seed ? `cp -a ${seed}/. results/` : "true",
    `node ${BIN} build ${SPEC} 2>stderr.txt; echo $? > rc.txt`,
    "cp -a results/. after/",
  ];
  await inMountNamespace(p, commands, { NO_COLOR: "1" });
  return { exitCode: Number(p.read("rc.txt").trim()), stderr: p.read("stderr.txt") };
}

const leftovers = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true })
        .map(String)
        .filter((n) => /\.(tmp|old)-/.test(n))
    : [];

describe.runIf(namespacesWork())("a full disk", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project(SUMS_SPECS);
  });
  afterAll(() => p.remove());

  it("a first build that cannot write its results records nothing and says the disk is full", async () => {
    const r = await buildOnSmallDisk(p, PAGE_KB, null); // the result needs five pages
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/cannot write results\/.*: no space left on the device \(ENOSPC\)/);
    expect(r.stderr).not.toContain("internal error");
    expect(p.exists("medbench.lock")).toBe(false);
    expect(existsSync(p.path("after", RESULT.slice("results/".length)))).toBe(false);
    expect(leftovers(p.path("after"))).toEqual([]);
    // The stages are fresh in the cache, but the results folder is not there: status says so.
    const status = await p.run(["status", SPEC]);
    expect(status.stdout).toMatch(/stale\s+results \(results\)\n\s+the results folder is missing/);
  });

  it("a rebuild into an existing folder leaves the old folder whole", async () => {
    await p.buildSpec(SPEC); // on the real disk
    const lock = p.read("medbench.lock");
    // An older result in the folder (each file differs from what this build writes).
    cpSync(p.path("results"), p.path("seed"), { recursive: true });
    for (const f of ["metrics.json", "items.jsonl", "replies.jsonl"])
      p.edit(join("seed", RESULT.slice("results/".length), f), (t) => t + "\n");
    const before = p.snapshot(["seed"]);
    const seeded = p.path("seed", RESULT.slice("results/".length));
    const files = readdirSync(seeded).length;
    for (const f of readdirSync(seeded)) expect(statSync(join(seeded, f)).size).toBeLessThan(PAGE_KB * 1024);
    // Room for the old folder and two more pages, not for a second copy.
    const r = await buildOnSmallDisk(p, (files + 2) * PAGE_KB, "seed");
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(r.stderr).not.toContain("internal error");
    expect(p.read("medbench.lock")).toBe(lock);
    rmSync(p.path("seed"), { recursive: true });
    cpSync(p.path("after"), p.path("seed"), { recursive: true });
    expect(p.snapshot(["seed"])).toBe(before);
    expect(leftovers(p.path("after"))).toEqual([]);
  });
});
