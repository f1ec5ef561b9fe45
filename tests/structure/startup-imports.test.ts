// The CLI's start-up stays close to Node's own: src/ and stages/ take fs, crypto,
// url and util through src/util/builtins.ts, never by an ES import (scripts/bench/builtins.mjs).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { execa } from "execa";
import { filesUnder, REPO } from "../support/helpers.js";
import { BIN, Project } from "../support/rig.js";

const VALUE_IMPORT = /^import\s+(?!type\b)[^;]*?from\s+"node:(fs|crypto|url|util)"/gm;

describe("start-up imports", () => {
  it("no module of src/ or stages/ ES-imports fs, crypto, url or util", () => {
    const files = ["src", "stages"]
      .flatMap((d) => filesUnder(join(REPO, d)))
      .filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .filter((f) => !f.endsWith("src/util/builtins.ts"))
      .flatMap((f) => [...readFileSync(f, "utf8").matchAll(VALUE_IMPORT)].map((m) => `${f}: ${m[0]}`));
    expect(offenders).toEqual([]);
  });

  it("the check sees an ES import of node:fs", () => {
    expect('import { readFileSync } from "node:fs";'.match(VALUE_IMPORT)).not.toBeNull();
    expect('import type { Stats } from "node:fs";'.match(VALUE_IMPORT)).toBeNull();
  });
});

/** The modules (install-relative) that `medbench ...args` loads, through
 *  tests/support/loaded-modules.cjs. */
async function loadedBy(args: string[], cwd = REPO): Promise<string[]> {
  const r = await execa("node", ["-r", join(REPO, "tests/support/loaded-modules.cjs"), BIN, ...args], {
    reject: false,
    cwd,
    env: { NO_COLOR: "1" },
  });
  const list = String(r.stderr).split("--- loaded modules\n")[1]?.split("--- loaded builtins\n")[0] ?? "";
  return list
    .split("\n")
    .filter(Boolean)
    .map((f) => relative(REPO, f));
}

describe("help loads what it prints, and nothing more", () => {
  it("the main help loads no command module and no package (it was 457 modules, 412 @stdlib)", async () => {
    const loaded = await loadedBy(["--help"]);
    expect(loaded).toContain("dist/src/cli/main.js");
    expect(loaded.filter((f) => f.includes("node_modules"))).toEqual([]);
    expect(loaded.filter((f) => /cli\/commands\/(?!index\.js)/.test(f))).toEqual([]);
    expect(loaded.length).toBeLessThan(20);
  });

  it("a command's help loads its own module and no package", async () => {
    for (const command of ["build", "check", "stats", "verify"]) {
      const loaded = await loadedBy([command, "--help"]);
      expect(loaded, command).toContain(`dist/src/cli/commands/${command}.js`);
      expect(
        loaded.filter((f) => f.includes("node_modules")),
        command,
      ).toEqual([]);
    }
  });
});

describe("a first build of a built-in task", () => {
  it("reads its rules and spec from dist/; loads no compiler, YAML parser or remote client", async () => {
    const p = new Project();
    try {
      const loaded = await loadedBy(["build", "specs/voice-command.yaml", "--quiet"], p.path());
      expect(loaded).toContain("dist/src/runner/code/task-rules.js");
      expect(p.read("results/kor-surgical-robot-voice-command/medbench_prior/metrics.json")).toContain("{");
      expect(loaded.filter((f) => f.includes("node_modules/typescript/"))).toEqual([]);
      // nor YAML's parser or the spec's validator: the shipped spec's parse is recorded in dist/parsed-specs
      expect(loaded.filter((f) => /dist\/(vendor\/yaml|spec-validator)\.cjs$/.test(f))).toEqual([]);
      // nor, without MEDBENCH_REMOTE, the shared remote's client (src/remote/opened.ts)
      expect(loaded).toContain("dist/src/remote/opened.js");
      const client = /remote\/(store|claims|claim-notes|pace)\.js$/;
      expect(loaded.filter((f) => client.test(f))).toEqual([]);
    } finally {
      p.remove();
    }
  });
});

describe("a first build copies and hashes its release", () => {
  it("a chunk at a time, without fs's streams (src/hash/sha256.ts)", async () => {
    const p = new Project();
    try {
      const r = await execa(
        "node",
        ["-r", join(REPO, "tests/support/loaded-modules.cjs"), BIN, "build", "specs/voice-command.yaml"],
        { reject: false, cwd: p.path(), env: { NO_COLOR: "1" } },
      );
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stdout)).toMatch(/done\s+download/); // it ran: the release was copied and hashed
      const builtins = String(r.stderr).split("--- loaded builtins\n")[1]!.split("\n");
      expect(builtins).toContain("NativeModule fs"); // the list is read
      expect(builtins).not.toContain("NativeModule internal/fs/streams");
    } finally {
      p.remove();
    }
  });
});

describe("the launcher", () => {
  it("loads child_process only to compile a checkout (about 0.07 of Node's start-up)", async () => {
    const r = await execa("node", ["-r", join(REPO, "tests/support/loaded-modules.cjs"), BIN, "--version"]);
    const builtins = String(r.stderr).split("--- loaded builtins\n")[1]!.split("\n");
    expect(builtins).toContain("NativeModule fs"); // the list is read
    expect(builtins.filter((m) => /child_process/.test(m))).toEqual([]);
  });

  it("is CommonJS, as dist/ is: Node's ES loader and its CommonJS export scan never start", async () => {
    const r = await execa("node", ["-r", join(REPO, "tests/support/loaded-modules.cjs"), BIN, "--version"]);
    const builtins = String(r.stderr).split("--- loaded builtins\n")[1]!.split("\n");
    expect(builtins).toContain("NativeModule internal/modules/cjs/loader"); // the list is read
    const esm = builtins.filter((m) =>
      /internal\/modules\/esm\/(translators|module_job)|cjs-module-lexer/.test(m),
    );
    expect(esm).toEqual([]);
  });
});
