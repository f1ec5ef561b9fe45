// A stage's key holds the code that computes its output, never the runner's infrastructure (the cache, the
// remote store, the HTTP client and its reply memo, the loggers) nor an infrastructure package: every stage
// kind's key closure, for every task and for a built-in and a served model; and a bumped infrastructure
// package leaves every stage of a built project fresh (through the CLI, on a copy of medbench).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { Install, Project, SUMS_SPECS } from "../support/rig.js";
import { compiled } from "../support/stage-code.js";
import { codeIdentity } from "../../src/runner/code/code.js";
import { REPO } from "../support/helpers.js";

// Written out here, not taken from src/runner/code/code.ts, so that a change there cannot hide a leak.
const INFRA_MODULE = /^dist\/src\/(runner\/cache\.js|remote\/|model\/(client|http|reply-memo)\.js|log\/)/;
const INFRA_PACKAGE = /^(@aws-sdk\/|@smithy\/|tar$|execa$|chart\.js$|playwright-core$)/;
const TASKS = ["voice-command", "mtsamples", "note-errors", "tests/fixtures/sums/task"];

describe("stage key closures", () => {
  for (const name of TASKS)
    it(`no stage kind's key holds infrastructure (${name})`, () => {
      const { stageCode, kinds, task } = compiled(name);
      const leaks: string[] = [];
      const builtin = Object.keys(task.baselines)[0]!;
      expect(kinds.size).toBeGreaterThan(0); // else the loop below checks nothing
      for (const [kindName, kind] of kinds)
        for (const model of [builtin, "fake/served-model"]) {
          const params = { model, judges: [model] };
          const id = stageCode(REPO, kind, params, { name, module: task });
          expect(Object.keys(id.code)).toContain(`dist/stages/${kindName}.js`);
          for (const f of Object.keys(id.code)) if (INFRA_MODULE.test(f)) leaks.push(`${kindName}: ${f}`);
          for (const p of Object.keys(id.packages))
            if (INFRA_PACKAGE.test(p)) leaks.push(`${kindName}: ${p}`);
        }
      expect([...new Set(leaks)]).toEqual([]);
    });

  it("the infrastructure patterns name what the build has: a leak would be seen", () => {
    // Without this, a renamed module or a moved dist/ would make every check here pass on anything.
    const id = codeIdentity(REPO, ["dist/src/model/client.js", "dist/src/remote/store.js"]);
    const infra = Object.keys(id.files).filter((f) => INFRA_MODULE.test(f));
    expect(infra).toEqual(expect.arrayContaining(["dist/src/model/client.js", "dist/src/remote/store.js"]));
    expect(Object.keys(id.packages).filter((p) => INFRA_PACKAGE.test(p)).length).toBeGreaterThan(0);
  });

  it("the kinds that compute from records load no infrastructure at all", () => {
    // Not stopped at a boundary: their whole require closure, as Node would load it.
    for (const kind of ["download", "prompts", "fit", "parse", "score", "bootstrap"]) {
      const id = codeIdentity(REPO, [`dist/stages/${kind}.js`]);
      expect(
        Object.keys(id.files).filter((f) => INFRA_MODULE.test(f)),
        kind,
      ).toEqual([]);
      expect(
        Object.keys(id.packages).filter((p) => INFRA_PACKAGE.test(p)),
        kind,
      ).toEqual([]);
    }
  });

  it("each stage holds its own part's module of the task, not the others'", () => {
    const { stageCode, kinds, task } = compiled("voice-command");
    const files = (kind: string, params: Record<string, string> = {}) =>
      Object.keys(
        stageCode(REPO, kinds.get(kind)!, params, { name: "voice-command", module: task }).code,
      ).filter((f) => f.startsWith("dist/tasks/"));
    const dir = "dist/tasks/voice-command";
    expect(files("prompts")).toEqual([`${dir}/prompts.js`, `${dir}/release.js`]);
    // The parser, and the reply schema's check compiled as medbench is built (compile-spec-schema.mjs).
    expect(files("parse")).toEqual([`${dir}/parser.js`, `${dir}/robot-command-check.cjs`]);
    expect(files("score")).toEqual([`${dir}/scorer.js`]);
    expect(files("bootstrap")).toEqual([]);
    expect(files("model", { model: "medbench/prior" })).toEqual([
      `${dir}/baselines.js`,
      `${dir}/release.js`,
    ]);
    expect(files("model", { model: "fake/served-model" })).toEqual([]);
  });
});

describe("an infrastructure package bumped", () => {
  let install: Install;
  let p: Project;
  beforeAll(async () => {
    install = new Install();
    p = new Project(SUMS_SPECS);
    await p.buildSpec("specs/sums.yaml", [], {}, install.bin);
  });
  afterAll(() => {
    install.remove();
    p.remove();
  });

  it("changes no stage key", async () => {
    const lockFile = install.path("package-lock.json");
    const npmLock = JSON.parse(readFileSync(lockFile, "utf8"));
    npmLock.packages["node_modules/@aws-sdk/client-s3"].version = "9.9.9-test";
    writeFileSync(lockFile, JSON.stringify(npmLock));
    const status = await p.run(["status", "specs/sums.yaml"], {}, install.bin);
    expect(status.stdout).not.toMatch(/stale|package changed/);
    expect(Object.values((await p.buildSpec("specs/sums.yaml", [], {}, install.bin)).status)).toEqual(
      Array(6).fill("fresh"),
    );
  });
});

describe("verify names the code a replay ran that the bundle's records do not", () => {
  let install: Install;
  let p: Project;
  beforeAll(async () => {
    install = new Install();
    p = new Project(SUMS_SPECS);
    await p.buildSpec("specs/sums.yaml", [], {}, install.bin);
    const r = await p.run(
      ["export", "results/fixture-sums/medbench_calculator", "-o", "b.tar.gz"],
      {},
      install.bin,
    );
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(() => {
    install.remove();
    p.remove();
  });

  it("the same code: said so", async () => {
    const r = await p.run(["verify", "b.tar.gz"], {}, install.bin);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        String.raw`replayed with this medbench's code \(medbench [^)]+\), ` +
          "for every replayed stage the code the bundle's records name",
      ),
    );
  });

  it("an edited parser: the parse stage's line names the file", async () => {
    install.edit("tests/fixtures/sums/task/parser.ts", (t) => `${t}\n// an edit that parses the same\n`);
    await install.compile();
    const r = await p.run(["verify", "b.tar.gz", "--json"], {}, install.bin);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.code_differences).toEqual([
      { stage: "parse", changes: ["code changed: tests/fixtures/sums/task/parser.ts"] },
    ]);
    const text = await p.run(["verify", "b.tar.gz"], {}, install.bin);
    expect(text.stdout).toContain(
      "which differs from the code the bundle's records name, per replayed stage:",
    );
    expect(text.stdout).toContain("parse: code changed: tests/fixtures/sums/task/parser.ts");
  });
});
