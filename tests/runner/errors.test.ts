// Bad input gets one clear message (what, where, how to fix), a non-zero exit, and changes nothing. On the
// fixture task (tests/fixtures/README.md): what is refused is the runner's, not any task's.
import { describe, expect, it } from "vitest";
import { chmodSync, cpSync, mkdirSync, rmSync } from "node:fs";
import { builtFixture, Project, SUMS_SPEC, SUMS_SPECS } from "../support/rig.js";

const SPEC = SUMS_SPEC;

describe("bad input", () => {
  const fixture = builtFixture();
  const { p } = fixture;

  const refused = (edit: ((t: string) => string) | null, args: string[] = ["build", SPEC], code = 2) =>
    p.refuses(edit, { file: SPEC, args, code });

  it("malformed YAML: file:line:column and the line", async () => {
    const err = await refused((t) =>
      t.replace("  prompts:\n    kind: prompts", "  prompts:\n    kind: [prompts"),
    );
    expect(err).toMatch(/specs\/sums\.yaml:\d+:\d+: malformed YAML/);
    expect(err).toMatch(/fix:/);
  });

  it("a schema violation names the key and its place", async () => {
    const err = await refused((t) => t.replace("    kind: score\n", "    kind: score\n    parmas: {}\n"));
    expect(err).toMatch(/sums\.yaml:\d+:5: stages\.score\.parmas: unknown key `parmas`/);
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
      /sums\.yaml:\d+:7: stages\.model\.params\.max_token: unknown parameter `max_token` for a model stage/,
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
        "      release: { stage: download }\n      user:",
        "      release: { stage: download }\n      loop: { stage: parse }\n      user:",
      ),
    );
    expect(err).toMatch(
      /sums\.yaml:\d+:\d+: stages\.prompts\.inputs: the stages form a cycle: prompts -> parse -> prompts/,
    );
  });

  it("an unknown spec reference", async () => {
    const err = await refused((t) =>
      t.replace("{ $spec: /request/max_tokens }", "{ $spec: /request/max_token }"),
    );
    expect(err).toMatch(/:\d+:\d+: .*the published spec has no field \/request\/max_token/);
  });

  it("a spec edited without its hash", async () => {
    // The fixture records no spec_hash: record the one `hash` computes, as a published spec would.
    const hash = (await p.run(["hash", SPEC])).stdout.trim();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const withHash = (t: string) => t.replace("\nversion: 0\n", `\nversion: 0\nspec_hash: ${hash}\n`);
    p.edit(SPEC, withHash);
    expect((await p.run(["build", SPEC, "--quiet"])).exitCode).toBe(0); // the recorded hash holds
    try {
      const err = await refused((t) => t.replace(/(\n\s+request:\n(?:.*\n)*?\s+temperature: )0\n/, "$11\n"));
      expect(err).toMatch(
        new RegExp(
          `spec_hash: the spec hashes to [0-9a-f]{64}, not to the recorded spec_hash ${hash.slice(0, 8)}`,
        ),
      );
    } finally {
      p.write(SPEC, fixture.pristine);
    }
  });

  it("a spec that is not UTF-8", async () => {
    const bytes = Buffer.concat([
      Buffer.from(fixture.pristine.slice(0, 20)),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(fixture.pristine.slice(20)),
    ]);
    p.write(SPEC, bytes);
    const r = await p.run(["build", SPEC]);
    p.write(SPEC, fixture.pristine);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/sums\.yaml:1:21: the file is not valid UTF-8/);
  });

  it("an input path that escapes the project, refused at its place before any stage runs", async () => {
    // A project that never built: a download stage that ran first would leave a cache behind.
    const fresh = new Project(SUMS_SPECS);
    try {
      for (const file of ["../../etc/passwd", "/etc/passwd"]) {
        const err = await fresh.refuses(
          (t) => t.replace("{ file: specs/sums/prompts/user.txt }", `{ file: ${file} }`),
          { file: SPEC },
        );
        expect(err).toMatch(/sums\.yaml:\d+:\d+: .*input file \S*etc\/passwd is outside the project/);
        expect(fresh.exists("cache")).toBe(false);
      }
    } finally {
      fresh.remove();
    }
  });

  it("a sample dir that escapes the project", async () => {
    // Refused with the spec, at its place, before anything runs.
    const err = await refused(
      (t) => t.replace("dir: specs/sums/sample", "dir: ../elsewhere"),
      ["build", SPEC],
    );
    expect(err).toMatch(/sums\.yaml:\d+:\d+: .*sample dir \.\.\/elsewhere leaves the project/);
  });

  it("a missing release file", async () => {
    const data = p.path("data-missing");
    cpSync(p.path("specs/sums/sample"), data, { recursive: true });
    rmSync(p.path("data-missing/items.jsonl"));
    const err = await refused(null, ["build", SPEC, "--data-dir", data], 1);
    expect(err).toMatch(/items\.jsonl is missing from .*data-missing/);
    expect(err).toMatch(/fix: use the complete release/);
  });

  it("an absent --data-dir", async () => {
    const err = await refused(null, ["build", SPEC, "--data-dir", p.path("no-such-dir")], 1);
    expect(err).toMatch(/--data-dir .*no-such-dir cannot be read \(ENOENT\)/);
  });

  // Reported as skipped, not passed, where it proves nothing: root reads a folder whatever its mode.
  it.skipIf(process.getuid?.() === 0)("an unreadable --data-dir (skipped when run as root)", async () => {
    mkdirSync(p.path("locked"), { recursive: true });
    chmodSync(p.path("locked"), 0o000);
    const err = await refused(null, ["build", SPEC, "--data-dir", p.path("locked")], 1);
    expect(err).toMatch(/cannot be read/);
  });

  it("a release path that escapes the data dir", async () => {
    const data = p.path("data-escape");
    cpSync(p.path("specs/sums/sample"), data, { recursive: true });
    const err = await refused(
      (t) => t.replace("        items.jsonl: null", "        ../items.jsonl: null"),
      ["build", SPEC, "--data-dir", data],
    );
    expect(err).toMatch(/sums\.yaml:\d+:\d+: .*release path \.\.\/items\.jsonl leaves the release/);
  });

  it("bad usage", async () => {
    expect((await p.run(["build"])).exitCode).toBe(2);
    expect((await p.run(["build", SPEC, "--limit", "x"])).stderr).toMatch(/--limit takes a whole number/);
    expect((await p.run(["frobnicate"])).exitCode).toBe(2);
    expect((await p.run(["build", "specs/nope.yaml"])).stderr).toMatch(/specs\/nope\.yaml: no such file/);
  });
});
