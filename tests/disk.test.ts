// Issue 14 item 4: a full disk never tears a result. The disk is really full: the CLI runs in a private
// mount namespace (`unshare -rm`, no root needed where user namespaces are enabled) with a small tmpfs
// mounted on the project's results/, so every write there meets the kernel's ENOSPC.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { execa, execaSync } from "execa";
import { BIN, Project } from "./rig.js";

const SPEC = "specs/voice-command.yaml";
const RESULT = "results/kor-surgical-robot-voice-command/medbench_prior";

function namespacesWork(): boolean {
  try {
    return execaSync("unshare", ["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"]).exitCode === 0;
  } catch {
    return false;
  }
}

/** Runs `medbench build` with a tmpfs of `kb` KiB on results/ holding a copy of `seed` (a folder of the
 *  project, or null); what results/ holds afterwards is copied to `after/`. */
async function buildOnSmallDisk(p: Project, kb: number, seed: string | null) {
  rmSync(p.path("after"), { recursive: true, force: true });
  mkdirSync(p.path("results"), { recursive: true });
  mkdirSync(p.path("after"));
  const script = [
    `mount -t tmpfs -o size=${kb}k tmpfs results`,
    seed ? `cp -a ${seed}/. results/` : "true",
    `node ${BIN} build ${SPEC} 2>stderr.txt; echo $? > rc.txt`,
    "cp -a results/. after/",
  ].join(" && ");
  const r = await execa("unshare", ["-rm", "sh", "-c", script], {
    cwd: p.dir,
    reject: false,
    env: { NO_COLOR: "1" },
  });
  expect(r.exitCode, r.stderr).toBe(0);
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
    p = new Project();
  });
  afterAll(() => p.remove());

  it("a first build that cannot write its results records nothing and says the disk is full", async () => {
    const r = await buildOnSmallDisk(p, 96, null); // the result needs ~190 KB
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/cannot write results\/.*: no space left on the device \(ENOSPC\)/);
    expect(r.stderr).not.toContain("internal error");
    expect(p.exists("medbench.lock")).toBe(false);
    expect(existsSync(p.path("after", "kor-surgical-robot-voice-command", "medbench_prior"))).toBe(false);
    expect(leftovers(p.path("after"))).toEqual([]);
    // The stages are fresh in the cache, but the results folder is not there: status says so.
    const status = await p.run(["status", SPEC]);
    expect(status.stdout).toMatch(/stale\s+results \(results\)\n\s+the results folder is missing/);
  });

  it("a rebuild into an existing folder leaves the old folder whole", async () => {
    await p.build(); // on the real disk
    const lock = p.read("medbench.lock");
    // An older result in the folder (each file differs from what this build writes).
    cpSync(p.path("results"), p.path("seed"), { recursive: true });
    for (const f of ["metrics.json", "items.jsonl", "requests.jsonl"])
      p.edit(join("seed", RESULT.slice("results/".length), f), (t) => t + "\n");
    const before = p.snapshot(["seed"]);
    const r = await buildOnSmallDisk(p, 280, "seed"); // room for the old folder (~190 KB), not a second copy
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
