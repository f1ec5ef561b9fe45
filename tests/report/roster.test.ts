// medbench build SPEC --roster: every run of the spec's check roster built in one command against the fake
// OpenAI-compatible server (each model on its route), then the check printed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";
import { Project } from "../support/rig.js";

const SPEC = "specs/note-errors.yaml";

describe("build --roster", () => {
  let fake: Fake;
  let p: Project;
  beforeAll(async () => {
    fake = (await startFake({ policy: "note-errors" })) as Fake;
    p = new Project();
    // The roster's routes that medbench does not ship (and openai), all sent to the fake server.
    const routes = ["deepseek", "openai", "zhipu", "alibaba"].map((r) => fakeRoute(r, fake.url));
    p.write("routes.yaml", `routes:\n${routes.join("")}`);
  });
  afterAll(async () => {
    await fake.close();
    p.remove();
  });

  it("builds every roster run with its own model, then prints the check", async () => {
    const r = await p.run(["build", SPEC, "--roster", "--registry", "routes.yaml"]);
    // The check's verdict is the exit code: on the synthetic sample it need not hold, but it is complete.
    expect([0, 1], r.stderr).toContain(r.exitCode);
    expect(r.stderr).not.toContain("internal error");
    expect(r.stderr).toContain("roster 1/8: strong_reference deepseek/");
    expect(r.stderr).toContain("roster 8/8: constant_yes medbench/constant-yes");
    for (const model of ["medbench_prior", "medbench_random", "medbench_constant-yes"])
      expect(existsSync(p.path(`results/syn-snuh-note-errors/${model}`)), model).toBe(true);
    expect(fake.stats.requests).toBeGreaterThan(0);
    expect(r.stdout).toContain("syn-snuh-note-errors check");
    expect(r.stdout).not.toContain("missing: no run");
    // The same check as `medbench check` prints, which now finds every run.
    const check = await p.run(["check", SPEC, "--registry", "routes.yaml"]);
    expect(check.exitCode).toBe(r.exitCode);
    expect(check.stdout).toBe(r.stdout.slice(r.stdout.indexOf("syn-snuh-note-errors check")));
    // Why a run cannot be used is said once, on its roster line, not again under each criterion needing it.
    const incomplete = check.stdout.split("\n").filter((l) => / incomplete: results\//.test(l));
    expect(incomplete.length).toBeGreaterThan(0);
    expect(check.stdout.split("results/syn-snuh-note-errors/").length - 1).toBe(incomplete.length);
    // The builds it suggests use the registry given, which has the routes: nothing to add.
    expect(check.stdout).not.toContain("after adding a route");
  }, 0);

  it("refuses --model with --roster, and a spec without a check", async () => {
    const both = await p.run(["build", SPEC, "--roster", "--model", "medbench/prior"]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain("--roster builds each model of the roster: drop --model");
    const none = await p.run(["build", "specs/voice-command.yaml", "--roster"]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain("declares no check, so no roster");
  }, 0);
});

describe("build --roster over several routes", () => {
  const ROUTES = ["deepseek", "openai", "zhipu", "alibaba"];
  let fakes: Fake[];
  let p: Project;
  beforeAll(async () => {
    // One server per route, each answering after 300 ms, so that a run's model stage lasts a while.
    fakes = await Promise.all(
      ROUTES.map(() => startFake({ policy: "note-errors", latencyMs: 300 }) as Promise<Fake>),
    );
    p = new Project();
    p.write("routes.yaml", `routes:\n${ROUTES.map((route, i) => fakeRoute(route, fakes[i]!.url)).join("")}`);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    p.remove();
  });

  it("builds runs on different routes at the same time and runs on one route in turn", async () => {
    const r = await p.run(["build", SPEC, "--roster", "--registry", "routes.yaml"]);
    expect([0, 1], r.stderr).toContain(r.exitCode);
    for (const fake of fakes) expect(fake.stats.requests).toBeGreaterThan(0);
    // Each route's server was asked during the others' time: some two of them overlap (in turn, none would).
    const spans = fakes.map((fake) => [fake.stats.firstAt!, fake.stats.lastAnsweredAt!] as const);
    const overlapping = spans.some(([start], i) =>
      spans.some(([otherStart, otherEnd], j) => i !== j && start >= otherStart && start < otherEnd),
    );
    expect(overlapping, JSON.stringify(spans)).toBe(true);
    // The built-in route's four runs: each ends before the next starts.
    const lines = r.stderr.split("\n").filter((line) => /^roster [5-8]\/8: /.test(line));
    expect(lines.map((line) => line.replace(/^(roster \d\/8): .*?(: (done|failed).*)?$/, "$1$2"))).toEqual(
      [5, 6, 7, 8].flatMap((n) => [
        `roster ${n}/8`,
        expect.stringMatching(new RegExp(`^roster ${n}/8: done`)),
      ]),
    );
    expect(r.stdout).toContain("syn-snuh-note-errors check");
  }, 0);
});
