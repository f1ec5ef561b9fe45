// spec_hash against the published recipe run by Python: 300 random task documents (floats of any bit
// pattern and NaN/Infinity, big integers, astral and high-BMP keys, Korean, control characters, `__proto__`)
// and lone surrogates, which the recipe cannot encode (scripts/reference/spec_hash_ref.py ->
// tests/data/golden/fidelity/spec-hash.json).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { parseSourceDoc, pyValueAt } from "../../src/specfile/document.js";
import { specHash } from "../../src/specfile/hash.js";
import { DiagnosticError } from "../../src/errors.js";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";

const { cases } = JSON.parse(readFileSync(testData("golden/fidelity/spec-hash.json"), "utf8")) as {
  cases: { text: string; spec_hash?: string; error?: string }[];
};
const hashOf = (text: string) =>
  specHash(pyValueAt(parseSourceDoc(Buffer.from(text, "utf8"), "doc.json"), "/spec"));

describe("spec_hash as Python's recipe", () => {
  it.each(cases.filter((c) => c.spec_hash).map((c, i) => [i, c] as const))("document %i", (_, c) => {
    expect(hashOf(c.text)).toBe(c.spec_hash);
  });
  it.each(cases.filter((c) => c.error).map((c) => [c.text, c] as const))("refused: %s", (_, c) => {
    expect(() => hashOf(c.text)).toThrow(DiagnosticError);
    expect(() => hashOf(c.text)).toThrow(/lone surrogate/);
  });
  it("through the CLI: __proto__ and NaN kept, a lone surrogate refused with its place", async () => {
    const p = new Project(false);
    const c = cases.find((x) => x.text.includes("__proto__") && x.text.includes("NaN"))!;
    const bare = cases.find((x) => x.text === '{"spec":{"__proto__":1}}')!;
    expect(bare.spec_hash).not.toBe(cases.find((x) => x.text === '{"spec":{}}')!.spec_hash);
    p.write("doc.json", c.text);
    const a = await p.run(["hash", "doc.json"]);
    expect([a.exitCode, a.stdout.trim()]).toEqual([0, c.spec_hash]);
    p.write("bad.json", '{"spec": {"a": "\\ud800"}}');
    const b = await p.run(["hash", "bad.json"]);
    expect(b.exitCode).toBe(2);
    expect(b.stderr).toMatch(/^error: bad\.json:1:16: a lone surrogate \(\\uD800\)/);
    expect(b.stderr).not.toMatch(/\n\s+at /);
    p.remove();
  });
});
