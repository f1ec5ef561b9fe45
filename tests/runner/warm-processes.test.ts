// Isolated stages' processes start ahead of their runs (src/runner/execution/warm.ts): while the model
// stage waits for its replies, the stages after it already have their processes, at most two at once; a
// process whose stage turns out fresh is ended, and a build leaves no process and no folder behind. Against
// the fake OpenAI-compatible server over real HTTP, its replies held at a gate so that what is running can
// be looked at however loaded the machine is. On the fixture task (tests/fixtures/README.md).
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { fixtureWithFake, gate, gatedRoutes, until } from "../support/gated-fake.js";

const cleanup = cleanedAfterEach();

const SPEC = "specs/sums.yaml";
const RESULTS = "results/fixture-sums/fake_test-model/metrics.json";
const BUILD = ["build", SPEC, "--model", "fake/test-model", "--registry", "routes.yaml"];

const setup = () => fixtureWithFake(cleanup, 4);

/** The live processes of the isolated stages' host for project `p` (its cache folder is on their command
 *  line, in what they may read). */
function isolatedOf(p: Project): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const zombie = readFileSync(`/proc/${name}/stat`, "utf8").includes(") Z ");
      if (!zombie && command.includes("isolated-host.js") && command.includes(p.dir))
        found.push(Number(name));
    } catch {
      /* the process ended while it was read */
    }
  }
  return found;
}

describe("isolated stages' processes, started ahead", () => {
  it("the stages after the model stage have theirs while it waits, two at most; none left", async () => {
    const { fake, p } = await setup();
    const held = gate();
    fake.set({ gate: held.promise });
    const build = p.start(BUILD);
    await until(() => fake.stats.requests > 0);
    const waiting = isolatedOf(p);
    held.open();
    const r = await build;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(waiting.length).toBeGreaterThanOrEqual(1);
    expect(waiting.length).toBeLessThanOrEqual(2);
    expect(isolatedOf(p)).toEqual([]);
    expect(readdirSync(p.path("cache/tmp"))).toEqual([]);
  });

  it("a build killed while its model stage waits leaves none of them running", async () => {
    const { fake, p } = await setup();
    fake.set({ gate: new Promise(() => {}) });
    const build = p.start(BUILD);
    await until(() => fake.stats.requests > 0);
    expect(isolatedOf(p).length).toBeGreaterThanOrEqual(1);
    build.kill("SIGKILL");
    await build;
    await until(() => isolatedOf(p).length === 0); // each ends when its channel to medbench closes
  });

  it("a stage whose process was killed while it waited is given a new one", async () => {
    const { fake, p } = await setup();
    const held = gate();
    fake.set({ gate: held.promise });
    const build = p.start(BUILD);
    await until(() => fake.stats.requests > 0 && isolatedOf(p).length > 0);
    const killed = isolatedOf(p);
    for (const pid of killed) process.kill(pid, "SIGKILL");
    // Gone from /proc once medbench has reaped them, which is when it learns that they ended.
    await until(() => killed.every((pid) => !existsSync(`/proc/${pid}`)));
    held.open();
    const r = await build;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toMatch(/run +parse/);
  });

  it("a build whose model stage fails ends the processes waiting and leaves no folder", async () => {
    const { fake, p } = await setup();
    const held = gate();
    // A 401 refuses the route: at the first, the model stage stops, the build fails with processes waiting.
    p.write(
      "routes.yaml",
      gatedRoutes(fake.url, 4).replace("concurrency: 4", "concurrency: 4\n    max_failures_in_a_row: 1"),
    );
    fake.set({ gate: held.promise, heldStatus: 401 });
    const build = p.start(BUILD);
    await until(() => fake.stats.requests > 0 && isolatedOf(p).length > 0);
    held.open();
    const r = await build;
    expect(r.exitCode).not.toBe(0);
    expect(String(r.stderr)).toMatch(/stage model/);
    expect(String(r.stdout)).not.toMatch(/run +parse/);
    expect(readdirSync(p.path("cache/tmp"))).toEqual([]);
    await until(() => isolatedOf(p).length === 0); // killed by the build as it failed
  });

  it("leaves the stat cache true to the inputs it linked: the next build hashes none again", async () => {
    const { p } = await setup();
    const r = await p.run(BUILD);
    expect(r.exitCode, r.stderr).toBe(0);
    // Sealed (src/hash/sealed.ts): a line of its seal, then the JSON.
    const text = p.read("cache/stat-cache.json");
    const { entries } = JSON.parse(text.slice(text.indexOf("\n") + 1)) as {
      entries: Record<string, { size: number; mtimeMs: number; ctimeMs: number; ino: number }>;
    };
    const objects = Object.entries(entries).filter(([path]) => path.includes("/cache/objects/"));
    expect(objects.length).toBeGreaterThanOrEqual(4);
    const moved = objects.filter(([path, entry]) => statSync(path).ctimeMs !== entry.ctimeMs);
    expect(moved.map(([path]) => path)).toEqual([]);
  });

  it("processes whose stages are fresh are ended unused, and the results are the same", async () => {
    const { p } = await setup();
    const first = await p.run(BUILD);
    expect(first.exitCode, first.stderr).toBe(0);
    const metrics = p.read(RESULTS);
    // The download runs again and makes the same release: the stages after it are fresh.
    const r = await p.run([...BUILD, "--refresh", "download"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/run +download/);
    expect(r.stdout).not.toMatch(/run +(prompts|parse|score)/);
    expect(readdirSync(p.path("cache/tmp"))).toEqual([]);
    // Killed with SIGKILL, not waited for: under load one may take a moment to be gone.
    await until(() => isolatedOf(p).length === 0);
    expect(p.read(RESULTS)).toBe(metrics);
  });
});
