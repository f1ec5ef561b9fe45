// The check's hints work when followed literally: a route the user's registry overrides is built with that
// registry (`check --registry` and `report --registry` alike), and the format criterion fails as soon as a
// usable run fails it, whatever runs are still missing. Against the fake OpenAI-compatible server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";

const SPEC = "specs/note-errors.yaml";
const STRONG = "deepseek/deepseek-v4-pro-1.6t-a49b";
const WEAK = "openai/gpt-oss-20b";

interface Check {
  criteria: { id: string; status: string; summary: string }[];
  missing: { role: string; model: string; reason: string }[];
}

describe("check hints", () => {
  let p: Project;
  let fake: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    // A model that never writes an Error line: every reply is a parse failure.
    fake = await startFake({ policy: () => "The note looks consistent to me." });
    p = new Project();
    // The user's file overrides the shipped `openai` route (here: to the fake) and adds `deepseek`.
    p.write("routes.yaml", `routes:\n${fakeRoute("openai", fake.url)}${fakeRoute("deepseek", fake.url)}`);
    const r = await p.run(["build", SPEC, "--model", STRONG, "--registry", "routes.yaml", "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await fake.close();
    p.remove();
  });

  const checkOf = async (args: string[]): Promise<Check> => {
    const r = await p.run(["check", SPEC, "--json", ...args]);
    return JSON.parse(r.stdout) as Check;
  };

  it("carries the user's registries into its suggested build for an overridden shipped route", async () => {
    const check = await checkOf(["--registry", "routes.yaml"]);
    const weak = check.missing.find((entry) => entry.model === WEAK)!;
    expect(weak.reason).toBe(`no run: medbench build ${SPEC} --model ${WEAK} --registry routes.yaml`);
    // Without --registry the shipped route is meant, and built as is.
    const plain = await checkOf([]);
    expect(plain.missing.find((entry) => entry.model === WEAK)!.reason).toBe(
      `no run: medbench build ${SPEC} --model ${WEAK}`,
    );
  });

  it("report --registry gives the check the same hints", async () => {
    const r = await p.run(["report", SPEC, "-o", "r.html", "--registry", "routes.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = JSON.parse(
      /<script id="data" type="application\/json">(.*?)<\/script>/s.exec(p.read("r.html"))![1]!,
    ) as { check: Check }[];
    const weak = data[0]!.check.missing.find((entry) => entry.model === WEAK)!;
    expect(weak.reason).toContain("--registry routes.yaml");
    expect(JSON.stringify(data[0]!.check)).not.toContain("after adding a route `deepseek`");
  });

  it("fails the format criterion on a usable run's parse failures while others are missing", async () => {
    const format = (await checkOf(["--registry", "routes.yaml"])).criteria.find((c) => c.id === "format")!;
    expect(format.status).toBe("fail");
    expect(format.summary).toMatch(/^strong_reference parse failures 100\.0%/);
    expect(format.summary).toMatch(/no usable run of weak_reference/);
  });
});
