// spec_hash as medbench.kr computes it: Python's json.dumps(sort_keys, compact, ensure_ascii=False) +
// sha256.
import { describe, expect, it } from "vitest";
import { pyDumps, pyFloatRepr, compareCodePoints } from "../../src/hash/pyjson.js";
import { parseSourceDoc, pyValueAt } from "../../src/specfile/document.js";
import { specHash } from "../../src/specfile/hash.js";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";

const py = (text: string) => pyDumps(pyValueAt(parseSourceDoc(Buffer.from(text), "t.yaml"), ""));

describe("Python float repr", () => {
  // Expected strings are what CPython's repr() prints for these doubles.
  it.each([
    [1, "1.0"],
    [100, "100.0"],
    [0.25, "0.25"],
    [1e-5, "1e-05"],
    [2.5e-7, "2.5e-07"],
    [1e16, "1e+16"],
    [1.2345678901234568e20, "1.2345678901234568e+20"],
    [0.0001, "0.0001"],
    [123456789012345.6, "123456789012345.6"],
    [1e15, "1000000000000000.0"],
    [-0.5, "-0.5"],
    [0.1 + 0.2, "0.30000000000000004"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
  ])("%s -> %s", (x, s) => expect(pyFloatRepr(x)).toBe(s));
  it("keeps -0.0", () => expect(pyFloatRepr(-0)).toBe("-0.0"));
});

describe("json.dumps layout", () => {
  it("integers and floats as the source wrote them", () => {
    expect(py("a: 1\nb: 1.0\nc: 1e-05\nd: 0.0\ne: 12345678901234567890")).toBe(
      '{"a":1,"b":1.0,"c":1e-05,"d":0.0,"e":12345678901234567890}',
    );
    expect(py('{"a": 1, "b": 1.0, "c": 2.50}')).toBe('{"a":1,"b":1.0,"c":2.5}');
  });
  it("sorts keys by code point at every depth, arrays in order", () => {
    expect(py("b: {z: 1, a: [3, 1]}\na: 0\nB: 2")).toBe('{"B":2,"a":0,"b":{"a":[3,1],"z":1}}');
    // U+FFFD sorts before U+1F600 in Python (code points), after it in UTF-16 order.
    expect(compareCodePoints("\uFFFD", "\u{1F600}")).toBeLessThan(0);
    expect(py('{"\u{1F600}": 1, "\uFFFD": 2}')).toBe('{"\uFFFD":2,"\u{1F600}":1}');
  });
  it("writes non-ASCII raw and escapes as Python does", () => {
    expect(pyDumps("수술 로봇")).toBe('"수술 로봇"');
    expect(pyDumps('q"\\\b\f\n\r\t\u0001\u001f\u007f\u2028')).toBe(
      '"q\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\u2028"',
    );
    expect(py("a: true\nb: false\nc: null")).toBe('{"a":true,"b":false,"c":null}');
  });
  it("strips only the top-level presentation keys", () => {
    const a = specHash({ x: 1n, title: "t", preview: true, visibility: "open" });
    expect(a).toBe(specHash({ x: 1n }));
    expect(specHash({ x: { title: "kept" } })).not.toBe(specHash({ x: {} }));
  });
});

describe("medbench hash", () => {
  it("prints the published hash for the spec file and for the task document", async () => {
    const p = new Project();
    const a = await p.run(["hash", "specs/voice-command.yaml"]);
    expect(a.stdout.trim()).toBe("3bc7dc79688a46dc00af2790c9d049d196d1da86de20a637020129b5336e6551");
    const b = await p.run(["hash", testData("seeds/000_501eba0df94162cf.txt"), "--json"]);
    expect(JSON.parse(b.stdout)).toEqual({
      spec_hash: "3bc7dc79688a46dc00af2790c9d049d196d1da86de20a637020129b5336e6551",
      published: "3bc7dc79688a46dc00af2790c9d049d196d1da86de20a637020129b5336e6551",
      matches: true,
    });
    p.write("doc.json", '{"spec": {"b": 1.0, "a": "é"}, "spec_hash": "0000"}');
    const c = await p.run(["hash", "doc.json"]);
    expect(c.exitCode).toBe(1);
    expect(c.stderr).toMatch(/records spec_hash 0000/);
    p.remove();
  });
});
