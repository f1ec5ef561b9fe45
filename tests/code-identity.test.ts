// What a stage key's code identity follows in the compiled (CommonJS) modules: every require, static or
// dynamic, to the modules it reaches, and every package those modules load, `createRequire(…)("x")` included
// (a package loaded on first use still runs). On small compiled files written here, and on the install.
import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codeIdentity, stageEntries } from "../src/runner/code.js";
import { REPO } from "./helpers.js";

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
        'const Ajv = (0, node_module_1.createRequire)(__filename)("ajv");',
        'const msg = "a message that ends in from \\"";',
      ].join("\n"),
    );
    write("dist/b.js", 'const yaml = require("yaml/dist/index.js");\n');
    write("dist/c.js", 'const d = require("@scope/pkg/sub");\nconst e = require("./missing.js");\n');
    const id = codeIdentity(root, ["dist/a.js"]);
    expect(Object.keys(id.files)).toEqual(["dist/a.js", "dist/b.js", "dist/c.js"]);
    expect(Object.keys(id.packages)).toEqual(["@scope/pkg", "ajv", "yaml"]);
  });

  it("keys the voice-command parse stage by the ajv it loads on first use", () => {
    const id = codeIdentity(REPO, stageEntries(REPO, "parse", "voice-command"));
    expect(id.packages.ajv).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Object.keys(id.files)).toContain("dist/tasks/voice-command/parser.js");
  });
});
