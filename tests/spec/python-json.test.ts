// Python's json.loads as medbench reads judge replies, voice-command replies and JSON task documents: every
// case gives the value or the error (message and position) CPython gave
// (scripts/reference/python_json_ref.py -> tests/data/golden/fidelity/python-json.json).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { PyJsonError, pyJsonLoads } from "../../src/hash/python-json.js";
import { pyFloatRepr, type PyValue } from "../../src/hash/pyjson.js";
import { testData } from "../support/helpers.js";

type Enc = [string, ...unknown[]];
interface Case {
  text: string;
  value?: Enc;
  error?: { msg?: string; pos?: number; int_limit?: boolean };
}

const floatName = (x: number) =>
  Number.isNaN(x) ? "nan" : x === Infinity ? "inf" : x === -Infinity ? "-inf" : pyFloatRepr(x);

function enc(v: PyValue): Enc {
  if (v === null) return ["null"];
  if (typeof v === "boolean") return ["bool", v];
  if (typeof v === "bigint") return ["int", v.toString()];
  if (typeof v === "number") return ["float", floatName(v)];
  if (typeof v === "string") return ["str", v];
  if (Array.isArray(v)) return ["list", v.map(enc)];
  return ["dict", Object.entries(v).map(([k, x]) => [k, enc(x)])];
}

// Python keeps insertion order; a JS object puts integer-like keys first: compare members as a set.
function sorted(e: Enc): unknown {
  if (e[0] === "list") return ["list", (e[1] as Enc[]).map(sorted)];
  if (e[0] === "dict")
    return [
      "dict",
      (e[1] as [string, Enc][])
        .map(([k, x]) => [k, sorted(x)])
        .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
    ];
  return e;
}

const { cases } = JSON.parse(readFileSync(testData("golden/fidelity/python-json.json"), "utf8")) as {
  cases: Case[];
};

describe("json.loads as CPython", () => {
  it.each(cases.map((c) => [JSON.stringify(c.text).slice(0, 60), c] as const))("%s", (_, c) => {
    let got: { value: unknown } | { error: Case["error"] };
    try {
      got = { value: sorted(enc(pyJsonLoads(c.text))) };
    } catch (e) {
      if (!(e instanceof PyJsonError)) throw e;
      got = { error: e.kind === "int-limit" ? { int_limit: true } : { msg: e.msg, pos: e.pos } };
    }
    expect(got).toEqual(c.error ? { error: c.error } : { value: sorted(c.value!) });
  });
});
