// A stage that runs in medbench's process after one that runs in a process of its own has its modules
// loaded while that process works (src/load/ahead.ts): the bootstrap's beta quantile is loaded before the
// bootstrap starts, and what it computes is the same.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { REPO } from "../support/helpers.js";
import { cleanedAfterEach, Project } from "../support/rig.js";
import { fakeRoute, startFake } from "../support/fake.js";

const PRELOAD = join(REPO, "tests/support/loaded-at-stage.cjs");
const QUANTILE = "dist/vendor/beta-quantile.cjs";

/** The modules loaded when `stage` started, in a build of the bundled voice-command sample. */
async function loadedAt(p: Project, stage: string): Promise<string[]> {
  const r = await p.run(["build", "specs/voice-command.yaml"], {
    NODE_OPTIONS: `--require ${PRELOAD}`,
    MEDBENCH_TEST_STAGE: stage,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  const list = r.stderr.split(`--- loaded as ${stage} started\n`)[1] ?? "";
  return list.split("\n").filter(Boolean);
}

describe("loading ahead", () => {
  const { servers } = cleanedAfterEach();
  it("the beta quantile is loaded while the isolated stages run, before the bootstrap starts", async () => {
    const p = new Project();
    try {
      const atBootstrap = await loadedAt(p, "bootstrap");
      expect(atBootstrap.length).toBeGreaterThan(50);
      expect(atBootstrap.some((file) => file.endsWith(QUANTILE))).toBe(true);
      // a Clopper-Pearson interval is in the result, computed with it
      expect(p.read("results/kor-surgical-robot-voice-command/medbench_prior/metrics.json")).toContain(
        '"clopper-pearson"',
      );
    } finally {
      p.remove();
    }
  });

  // Node's list of what it loaded, as the model stage starts; a model behind a route (the fake server, over
  // real HTTP), whose stage runs in medbench's process after prompts, which runs in its own.
  const BUILTINS_AT_MODEL = `let at = null;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  if (at === null && /\\brun\\s+model\\b/.test(String(chunk))) at = [...process.moduleLoadList];
  return write(chunk, ...rest);
};
process.on("exit", () => process.stderr.write("--- builtins at model\\n" + (at ?? []).join("\\n") + "\\n"));
`;

  it("node:http is loaded while prompts runs, before the model stage starts", async () => {
    const p = new Project();
    try {
      const fake = await startFake({});
      servers.push(fake);
      p.write("routes.yaml", `routes:\n${fakeRoute("fake", fake.url)}`);
      p.write("builtins.cjs", BUILTINS_AT_MODEL);
      const args = ["--model", "fake/test-model", "--registry", "routes.yaml"];
      const r = await p.run(["build", "specs/voice-command.yaml", ...args], {
        NODE_OPTIONS: `--require ${p.path("builtins.cjs")}`,
      });
      expect(fake.stats.requests).toBeGreaterThan(0);
      expect(r.exitCode, r.stderr).toBe(0);
      const list = (r.stderr.split("--- builtins at model\n")[1] ?? "").split("\n");
      expect(list).toContain("NativeModule child_process"); // prompts ran in its own process
      expect(list).toContain("NativeModule http");
    } finally {
      p.remove();
    }
  });

  it("not before an isolated stage starts: the build's start-up does not load it", async () => {
    const p = new Project();
    try {
      const atPrompts = await loadedAt(p, "prompts");
      expect(atPrompts.some((file) => file.endsWith("dist/src/runner/execution/executor.js"))).toBe(true);
      expect(atPrompts.some((file) => file.endsWith(QUANTILE))).toBe(false);
    } finally {
      p.remove();
    }
  });
});
