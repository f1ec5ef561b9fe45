// What a stage key's code identity follows in the compiled (CommonJS) modules: every require by a literal
// name, static or dynamic, to the modules it reaches, and every package those modules load. And, over the
// whole of dist/, that no module loads code the scanner cannot follow, apart from the two computed loads
// whose code is keyed otherwise. On small compiled files written here, and on the install.
import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { codeIdentity, filesUnder, IMPORT_RE } from "../../src/runner/code/code.js";
import { compiled } from "../support/stage-code.js";
import { REPO } from "../support/helpers.js";

describe("code identity", () => {
  const root = mkdtempSync(join(tmpdir(), "medbench-code-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  };

  it("follows static and dynamic requires and names every package loaded", () => {
    write(
      "dist/a.js",
      [
        '"use strict";',
        'const b_js_1 = require("./b.js");',
        'const node_fs_1 = require("node:fs");',
        'const later = () => Promise.resolve().then(() => __importStar(require("./c.js")));',
        "const d = () => Promise.resolve().then(() => __importStar(require(`./d.js`)));",
        "const e = (name) => require(`./${name}.js`);",
        'const Ajv = require("ajv");',
        'const msg = "a message that ends in from \\"";',
      ].join("\n"),
    );
    write("dist/b.js", 'const yaml = require("yaml/dist/index.js");\n');
    write("dist/c.js", 'const d = require("@scope/pkg/sub");\nconst e = require("./missing.js");\n');
    write("dist/d.js", "exports.d = 1;\n");
    const id = codeIdentity(root, ["dist/a.js"]);
    expect(Object.keys(id.files)).toEqual(["dist/a.js", "dist/b.js", "dist/c.js", "dist/d.js"]);
    expect(Object.keys(id.packages)).toEqual(["@scope/pkg", "ajv", "yaml"]);
  });

  it("keys the voice-command parse stage by the ajv it loads on first use", () => {
    const { stageCode, kinds, task } = compiled("voice-command");
    const id = stageCode(REPO, kinds.get("parse")!, {}, { name: "voice-command", module: task });
    // The installed version and its tarball's integrity as npm recorded it (npm ci installed it), and so
    // of every package ajv loads.
    expect(id.packages.ajv).toMatch(/^\d+\.\d+\.\d+ sha512-[A-Za-z0-9+/=]+$/);
    expect(id.packages["fast-uri"]).toMatch(/ sha512-/);
    expect(Object.keys(id.code)).toContain("dist/tasks/voice-command/parser.js");
  });

  it("finds in dist/ no load the scanner cannot follow, but the three whose code is keyed otherwise", () => {
    // Every call that loads code, whatever its argument; and createRequire, which would hide one.
    const LOADS = /\b(?:require|import)\s*\(|\bcreateRequire\b/g;
    const unfollowed: string[] = [];
    for (const file of filesUnder(join(REPO, "dist")).filter((f) => f.endsWith(".js"))) {
      const text = readFileSync(file, "utf8");
      const loads = [...text.matchAll(LOADS)].length;
      const followed = [...text.matchAll(IMPORT_RE)].filter((m) =>
        /\b(?:require|import)\s*\(/.test(m[0]),
      ).length;
      if (loads !== followed) unfollowed.push(`${relative(REPO, file)}: ${loads - followed}`);
    }
    // A task's module, loaded by its folder's path (every file of the folder is in the key of a stage that
    // calls the task), and a task of the user's repository, loaded from its compiled folder (keyed the same
    // way, src/runner/code/code.ts userTaskIdentity); a schema validator, generated from a schema and only
    // checking a spec or a registry; and the scanner itself, whose createRequire resolves a package's file
    // to key it and loads nothing; and an isolated stage's process, which loads its stage kind's module and
    // the task modules its key holds, each by the path the key names.
    expect(unfollowed.sort()).toEqual([
      "dist/src/load/runtime.js: 2",
      "dist/src/runner/code/code.js: 1",
      "dist/src/runner/code/isolated-host.js: 3",
      "dist/src/specfile/schema.js: 1",
    ]);
  });
});

describe("which task modules each stage of the built-in tasks is keyed on", () => {
  /** The task modules (by file name) in the key of a stage of `kind` with `params`. */
  const taskModules = (task: string, kind: string, params: object): string[] => {
    const c = compiled(task);
    const id = c.stageCode(REPO, c.kinds.get(kind)!, params as never, { name: task, module: c.task });
    const prefix = `dist/tasks/${task}/`;
    return Object.keys(id.code)
      .filter((f) => f.startsWith(prefix))
      .map((f) => f.slice(prefix.length));
  };

  it("mtsamples: instances, readings and judges reach only the stages that import them", () => {
    expect(taskModules("mtsamples", "model", { model: "medbench/impression" })).toEqual([
      "baselines.js",
      "criteria.js",
    ]);
    expect(taskModules("mtsamples", "judge", { judges: ["local/qwen3-8b"] })).toEqual(["judges.js"]);
    expect(taskModules("mtsamples", "prompts", {})).toEqual(["instances.js", "prompts.js"]);
    expect(taskModules("mtsamples", "score", {})).toEqual([
      "instances.js",
      "judge-readings.js",
      "readings.js",
      "scorer.js",
    ]);
  });

  it("note-errors: each stage is keyed on its part's modules, never on index.ts", () => {
    expect(taskModules("note-errors", "parse", {})).toEqual(["task-parse.js", "verdict.js"]);
    expect(taskModules("note-errors", "bootstrap", {})).toEqual(["metrics.js", "rows.js"]);
    for (const kind of ["prompts", "parse", "score", "bootstrap"])
      expect(taskModules("note-errors", kind, {})).not.toContain("index.js");
  });
});
