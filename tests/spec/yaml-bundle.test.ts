// The yaml medbench loads as built (dist/vendor/yaml.cjs, the package's modules joined into one file by
// scripts/bundle-vendor.mjs) reads every YAML document of the repository as the package does: the same
// values, the same node positions (every diagnostic's file:line:column) and the same errors.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";

type Yaml = typeof import("yaml");
const require = createRequire(join(REPO, "package.json"));
const bundled = require(join(REPO, "dist/vendor/yaml.cjs")) as Yaml;
const own = require("yaml") as Yaml;

const DOCUMENTS = [
  "registry/providers.yaml",
  "specs/voice-command.yaml",
  "specs/mtsamples.yaml",
  "specs/note-errors.yaml",
  "examples/routes.yaml",
];

/** Each node's range and value, depth first, as the spec loader reads them for positions. */
function nodes(yaml: Yaml, text: string): unknown[] {
  const lines = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, { lineCounter: lines, keepSourceTokens: false });
  const out: unknown[] = [doc.errors.map((error) => error.message), doc.toJS()];
  yaml.visit(doc, (key, node) => {
    const range = (node as { range?: [number, number, number] }).range;
    out.push([key, range, range ? lines.linePos(range[0]) : null]);
  });
  return out;
}

describe("the bundled yaml", () => {
  it("is a separate copy that loads no module of the package", () => {
    expect(bundled).not.toBe(own);
    expect(readFileSync(join(REPO, "dist/vendor/yaml.cjs"), "utf8")).not.toMatch(/require\(["']yaml/);
  });

  it.each(DOCUMENTS)("reads %s as the package does, positions included", (file) => {
    const text = readFileSync(join(REPO, file), "utf8");
    expect(nodes(bundled, text)).toEqual(nodes(own, text));
  });

  it("reports a broken document as the package does", () => {
    const text = "stages:\n  a: [1, 2\n  b: { c: 1\nkey: : value\n";
    expect(nodes(bundled, text)).toEqual(nodes(own, text));
  });

  it("is what the spec loader loads once built", () => {
    const loader = require(join(REPO, "dist/src/specfile/document.js")) as {
      parseSourceDoc(bytes: Buffer, file: string): { doc: unknown };
    };
    const { doc } = loader.parseSourceDoc(Buffer.from("a: 1\n"), "a.yaml");
    expect(doc).toBeInstanceOf(bundled.Document);
    expect(doc).not.toBeInstanceOf(own.Document);
  });
});
