// medbench build SPEC --roster: every run of the spec's check roster built in one command against the fake
// OpenAI-compatible server (each model on its route), then the check printed (issue 28).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { fakeRoute, startFake, type Fake } from "./fake.js";
import { Project } from "./rig.js";

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
