// A --registry file named on status's command line is read and checked as build reads it, whether a stage
// needs routes or not: a missing, unreadable or broken file is build's error (what, where, how to fix),
// exit 2, nothing changed; a good one gives the status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { Project } from "../support/rig.js";

const SPEC = "specs/voice-command.yaml";
const CASES = [
  { file: "missing.yaml", make: () => undefined, says: "missing.yaml: cannot read the route registry" },
  { file: "folder.yaml", make: (p: Project) => mkdirSync(p.path("folder.yaml")), says: "folder.yaml" },
  {
    file: "broken.yaml",
    make: (p: Project) => p.write("broken.yaml", "routes:\n  x: { base_url: 3 }\n"),
    says: "broken.yaml:2:18: routes.x.base_url: must be string",
  },
];

describe("status --registry", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project();
  });
  afterAll(() => p?.remove());

  it.each(CASES)("refuses $file as build does", async ({ file, make, says }) => {
    make(p);
    const status = await p.refuses(null, { args: ["status", SPEC, "--registry", file] });
    const build = await p.refuses(null, { args: ["build", SPEC, "--registry", file] });
    expect(status).toContain(says);
    expect(status).toContain("fix: ");
    expect(status).toBe(build);
  });

  it("gives the status with a good file, no stage needing its routes", async () => {
    p.write("routes.yaml", "routes:\n  mine: { base_url: http://127.0.0.1:9/v1 }\n");
    const r = await p.run(["status", SPEC, "--registry", "routes.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("never built model (model)");
  });
});
