// Two builds of the same spec and model at once: the second waits for the first and reuses
// its replies, so every request is sent once; a waiter whose holder is killed takes the build lock at once.
// Against the fake OpenAI-compatible server over real HTTP, its replies held at a gate so that the two
// builds overlap however loaded the machine is. On the fixture task (tests/fixtures/README.md).
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Project, SUMS_SPECS, cleanedAfterEach } from "../support/rig.js";
import { fixtureWithFake, gate, gatedRoutes, until } from "../support/gated-fake.js";

const SPEC = "specs/sums.yaml";
const RESULTS = "results/fixture-sums/fake_test-model";
const BUILD = ["build", SPEC, "--model", "fake/test-model", "--registry", "routes.yaml", "--json"];
const CONCURRENCY = 4;

const cleanup = cleanedAfterEach();
const setup = () => fixtureWithFake(cleanup, CONCURRENCY);

/** Every file of a results folder, by name. */
function filesOf(p: Project, dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(p.path(dir))
      .sort()
      .map((f) => [f, readFileSync(join(p.path(dir), f), "utf8")]),
  );
}

describe("two builds of the same spec and model at once (14.5)", () => {
  it("send every request once: the second waits, then reuses the first's replies", async () => {
    // The number of requests and the results, from one build alone (in its own project, same server).
    const { fake, p: alone } = await setup();
    const r0 = await alone.run(BUILD);
    expect(r0.exitCode, r0.stderr).toBe(0);
    const N = fake.stats.requests;
    expect(N).toBe(fake.stats.bodies.size); // a healthy server: each body once
    const items = alone.read("specs/sums/sample/items.jsonl").trim().split("\n").length;
    expect(N).toBe(items);
    expect(N).toBeGreaterThan(CONCURRENCY); // a cannot send them all while its first replies are held

    const p = new Project(SUMS_SPECS);
    cleanup.projects.push(p);
    p.write("routes.yaml", gatedRoutes(fake.url, CONCURRENCY));
    const g = gate();
    fake.set({ gate: g.promise });
    const a = p.start(BUILD);
    await until(() => fake.stats.requests >= N + 1); // a is in its model stage, its replies held
    const b = p.start(BUILD);
    let bErr = "";
    b.stderr!.on("data", (d: Buffer) => (bErr += d.toString()));
    // b either waits for a (and says so) or, without a build lock, sends requests of its own.
    await until(() => bErr.includes("waiting for another build") || fake.stats.requests > N + CONCURRENCY);
    g.open();
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.exitCode, String(ra.stderr)).toBe(0);
    expect(rb.exitCode, String(rb.stderr)).toBe(0);
    expect(String(rb.stderr)).toContain("waiting for another build of specs/sums.yaml");
    expect(fake.stats.requests).toBe(2 * N);
    expect([...fake.stats.bodies.values()].every((n) => n === 2)).toBe(true); // once alone, once here
    const statuses = JSON.parse(String(rb.stdout).trim().split("\n").pop()!).stages.map(
      (s: { status: string }) => s.status,
    );
    expect(statuses.every((s: string) => s === "fresh")).toBe(true);
    expect(filesOf(p, RESULTS)).toEqual(filesOf(alone, RESULTS));
    expect(p.read("medbench.lock")).toBe(alone.read("medbench.lock"));
    expect(readdirSync(p.path("cache/locks"))).toEqual([]); // released
  });

  it("a waiter takes the lock at once when its holder is killed; sends only what had no reply", async () => {
    const { fake, p } = await setup();
    const g = gate();
    fake.set({ gate: g.promise });
    const a = p.start(BUILD);
    await until(() => fake.stats.requests >= CONCURRENCY); // a's first requests are in flight, held
    const b = p.start(BUILD);
    let bErr = "";
    b.stderr!.on("data", (d: Buffer) => (bErr += d.toString()));
    await until(() => bErr.includes("waiting for another build"));
    a.kill("SIGKILL");
    const ra = await a;
    expect(ra.signal).toBe("SIGKILL");
    g.open(); // the killed build's held requests were never answered to it
    const rb = await b;
    expect(rb.exitCode, String(rb.stderr)).toBe(0);
    // b sent every request itself (a got no reply), each once more at most than a did.
    expect([...fake.stats.bodies.values()].every((n) => n <= 2)).toBe(true);
    expect(fake.stats.requests - fake.stats.bodies.size).toBeLessThanOrEqual(CONCURRENCY);
    expect(JSON.parse(p.read(`${RESULTS}/metrics.json`)).incomplete).toBe(false);
  });
});
