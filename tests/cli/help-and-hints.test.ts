// What the CLI tells a user who is stuck: real help for status, builds that can run for check's missing
// runs, and diff's reasons for a removed parameter. Downloads that cannot reach the network:
// tests/runner/download.test.ts.
import { afterAll, describe, expect, it } from "vitest";
import { Project, SUMS_SPECS } from "../support/rig.js";
import { fakeRoute } from "../support/fake.js";

describe("help and hints", () => {
  const projects: Project[] = [];
  afterAll(() => projects.forEach((p) => p.remove()));

  it("status --help says what status does and every option it takes", async () => {
    const p = new Project(false);
    projects.push(p);
    const r = await p.run(["status", "--help"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim().split("\n").length).toBeGreaterThan(5);
    for (const option of ["--model", "--data-dir", "--project", "--json"])
      expect(r.stdout).toContain(option);
    expect(r.stdout).toContain("writes nothing");
  });

  it("check suggests a runnable build: a route medbench does not ship must be added first", async () => {
    const p = new Project();
    projects.push(p);
    const r = await p.run(["check", "specs/note-errors.yaml"]);
    // A shipped route as it is; a route of no shipped registry with --registry and what to add there.
    expect(r.stdout).toContain("no run: medbench build specs/note-errors.yaml --model openai/gpt-oss-20b\n");
    expect(r.stdout).toMatch(
      /--model deepseek\/\S+ --registry routes\.yaml, after adding a route `deepseek` to routes\.yaml/,
    );
    expect(r.stdout).not.toMatch(/--model zhipu\/\S+\n/);
  });

  it("check names the registry given (build --roster passes it on); medbench/ needs none", async () => {
    const p = new Project();
    projects.push(p);
    p.write("team.yaml", `routes:\n${fakeRoute("deepseek", "http://127.0.0.1:9")}`);
    const r = await p.run(["check", "specs/note-errors.yaml", "--registry", "team.yaml"]);
    expect(r.exitCode, r.stderr).toBe(1);
    // The route the registry has: built with it, nothing to add; one it lacks: added to that registry.
    expect(r.stdout).toMatch(
      /no run: medbench build specs\/note-errors\.yaml --model deepseek\/\S+ --registry team\.yaml\n/,
    );
    expect(r.stdout).toMatch(
      /--model zhipu\/\S+ --registry team\.yaml, after adding a route `zhipu` to team\.yaml\n/,
    );
    expect(r.stdout).toContain("no run: medbench build specs/note-errors.yaml --model medbench/random\n");
    expect(r.stdout).not.toContain("routes.yaml");
  });

  it("diff names a removed parameter's side as (none), never undefined", async () => {
    const p = new Project(SUMS_SPECS);
    projects.push(p);
    p.write("specs/b.yaml", p.read("specs/sums.yaml").replace("    params:\n      tolerance: 0\n", ""));
    const r = await p.run(["diff", "specs/sums.yaml", "specs/b.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("score: params tolerance: 0 -> (none)");
    expect(r.stdout).not.toContain("undefined");
  });
});
