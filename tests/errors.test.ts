// Bad input gets one clear message (what, where, how to fix), a non-zero exit, and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmodSync, cpSync, mkdirSync } from "node:fs";
import { Project } from "./rig.js";

const SPEC = "specs/voice-command.yaml";

describe("bad input", () => {
  let p: Project;
  let pristine: string;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    pristine = p.read(SPEC);
  });
  afterAll(() => p.remove());

  const refused = (edit: ((t: string) => string) | null, args: string[] = ["build", SPEC], code = 2) =>
    p.refuses(edit, { args, code });

  it("malformed YAML: file:line:column and the line", async () => {
    const err = await refused((t) =>
      t.replace("  prompts:\n    kind: prompts", "  prompts:\n    kind: [prompts"),
    );
    expect(err).toMatch(/specs\/voice-command\.yaml:\d+:\d+: malformed YAML/);
    expect(err).toMatch(/fix:/);
  });

  it("a schema violation names the key and its place", async () => {
    const err = await refused((t) => t.replace("    kind: score\n", "    kind: score\n    parmas: {}\n"));
    expect(err).toMatch(/voice-command\.yaml:\d+:5: stages\.score\.parmas: unknown key `parmas`/);
    expect(err).toContain("parmas: {}");
  });

  it("an unknown stage kind", async () => {
    const err = await refused((t) => t.replace("kind: score", "kind: scorer"));
    expect(err).toMatch(/:\d+:\d+: stages\.score\.kind: unknown stage kind `scorer`/);
    expect(err).toMatch(/use one of: bootstrap, download, fit, judge, model, parse, prompts, score/);
  });

  it("an unknown stage parameter (a typo is not silently ignored)", async () => {
    const err = await refused((t) =>
      t.replace(
        "      max_tokens: { $spec: /request/max_tokens }",
        "      max_token: { $spec: /request/max_tokens }",
      ),
    );
    expect(err).toMatch(
      /voice-command\.yaml:\d+:7: stages\.model\.params\.max_token: unknown parameter `max_token` for a model stage/,
    );
    expect(err).toMatch(/fix: use one of: model, max_tokens, temperature, top_p, thinking, overrides/);
  });

  it("an unknown stage reference", async () => {
    const err = await refused((t) => t.replace("parsed: { stage: parse }", "parsed: { stage: parser }"));
    expect(err).toMatch(/stages\.score\.inputs\.parsed\.stage: unknown stage `parser`/);
  });

  it("a cycle", async () => {
    const err = await refused((t) =>
      t.replace(
        "      release: { stage: download }\n      system:",
        "      release: { stage: download }\n      loop: { stage: parse }\n      system:",
      ),
    );
    expect(err).toMatch(
      /voice-command\.yaml:\d+:\d+: stages\.prompts\.inputs: the stages form a cycle: prompts -> parse -> prompts/,
    );
  });

  it("an unknown spec reference", async () => {
    const err = await refused((t) =>
      t.replace("{ $spec: /request/max_tokens }", "{ $spec: /request/max_token }"),
    );
    expect(err).toMatch(/:\d+:\d+: .*the published spec has no field \/request\/max_token/);
  });

  it("a spec edited without its hash", async () => {
    const err = await refused((t) => t.replace(/(\n\s+request:\n(?:.*\n)*?\s+temperature: )0\n/, "$11\n"));
    expect(err).toMatch(/spec_hash: the spec hashes to [0-9a-f]{64}, not to the recorded spec_hash 3bc7dc79/);
  });

  it("a spec that is not UTF-8", async () => {
    const bytes = Buffer.concat([
      Buffer.from(pristine.slice(0, 20)),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(pristine.slice(20)),
    ]);
    p.write(SPEC, bytes);
    const r = await p.run(["build", SPEC]);
    p.write(SPEC, pristine);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/voice-command\.yaml:1:21: the file is not valid UTF-8/);
  });

  it("an input path that escapes the project", async () => {
    const err = await refused((t) =>
      t.replace("{ file: specs/voice-command/prompts/user.txt }", "{ file: ../../etc/passwd }"),
    );
    expect(err).toMatch(/input file path \.\.\/\.\.\/etc\/passwd escapes/);
  });

  it("a sample dir that escapes the project", async () => {
    const err = await refused(
      (t) => t.replace("dir: specs/voice-command/sample", "dir: ../elsewhere"),
      ["build", SPEC],
      1,
    );
    expect(err).toMatch(/sample dir \.\.\/elsewhere escapes/);
  });

  it("a missing release file", async () => {
    const data = p.path("data-missing");
    cpSync(p.path("specs/voice-command/sample"), data, { recursive: true });
    p.write("data-missing/benchmark/scenes_v0.1.json", "");
    const { rmSync } = await import("node:fs");
    rmSync(p.path("data-missing/benchmark/scenes_v0.1.json"));
    const err = await refused(null, ["build", SPEC, "--data-dir", data], 1);
    expect(err).toMatch(/benchmark\/scenes_v0\.1\.json is missing from .*data-missing/);
    expect(err).toMatch(/fix: use the complete release/);
  });

  it("an unreadable or absent --data-dir", async () => {
    const err = await refused(null, ["build", SPEC, "--data-dir", p.path("no-such-dir")], 1);
    expect(err).toMatch(/--data-dir .*no-such-dir cannot be read \(ENOENT\)/);
    mkdirSync(p.path("locked"), { recursive: true });
    chmodSync(p.path("locked"), 0o000);
    if (process.getuid?.() !== 0) {
      // root reads anything
      const err2 = await refused(null, ["build", SPEC, "--data-dir", p.path("locked")], 1);
      expect(err2).toMatch(/cannot be read/);
    }
  });

  it("a release path that escapes the data dir", async () => {
    const data = p.path("data-escape");
    cpSync(p.path("specs/voice-command/sample"), data, { recursive: true });
    const err = await refused(
      (t) => t.replace("        benchmark/rules_v0.1.txt: null", "        ../rules_v0.1.txt: null"),
      ["build", SPEC, "--data-dir", data],
      1,
    );
    expect(err).toMatch(/release file \.\.\/rules_v0\.1\.txt escapes/);
  });

  it("bad usage", async () => {
    expect((await p.run(["build"])).exitCode).toBe(2);
    expect((await p.run(["build", SPEC, "--limit", "x"])).stderr).toMatch(/--limit takes a whole number/);
    expect((await p.run(["frobnicate"])).exitCode).toBe(2);
    expect((await p.run(["build", "specs/nope.yaml"])).stderr).toMatch(/specs\/nope\.yaml: no such file/);
  });
});
