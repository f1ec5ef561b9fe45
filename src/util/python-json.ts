// Python's json.loads (CPython 3.11, its C scanner), ported: the same accepted text (NaN, Infinity and
// -Infinity are numbers; raw control characters in strings are refused), the same error message for the
// same first fault (HELM retries on exactly "Expecting ',' delimiter"), integers as bigint and floats as
// number (Python tells 1 from 1.0), duplicate keys last-wins. Positions are in code points, as Python's.
// Checked against CPython by tests/python-json.test.ts (fixtures from scripts/reference/python_json_ref.py).
import type { PyValue } from "../hash/pyjson.js";

export class PyJsonError extends Error {
  /** `decode`: a json.JSONDecodeError; `int-limit`: the ValueError of an integer over 4,300 digits. */
  constructor(
    readonly msg: string,
    readonly pos: number,
    readonly kind: "decode" | "int-limit" = "decode",
  ) {
    super(kind === "decode" ? `${msg}: char ${pos}` : msg);
  }
}

/** Sets an own member even when its name is `__proto__` (plain assignment would set the prototype). */
export function setMember(obj: { [k: string]: PyValue }, key: string, value: PyValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};
const HEX = /^[0-9a-fA-F]{4}$/;
const NUMBER = /(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const INT_MAX_STR_DIGITS = 4300; // CPython >= 3.11: sys.get_int_max_str_digits()

/** json.loads(text); throws PyJsonError where Python raises. */
export function pyJsonLoads(text: string): PyValue {
  const cp = (unit: number) => [...text.slice(0, unit)].length; // a UTF-16 index as Python's index
  const fail = (msg: string, unit: number): never => {
    throw new PyJsonError(msg, cp(unit));
  };
  const n = text.length;
  const skip = (i: number) => {
    while (i < n && WS.has(text[i]!)) i++;
    return i;
  };

  function scanString(begin: number): [string, number] {
    // begin: the index after the opening quote
    let out = "";
    let i = begin;
    for (;;) {
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === 0x22 || c === 0x5c || c < 0x20) break;
        j++;
      }
      if (j >= n) fail("Unterminated string starting at", begin - 1);
      out += text.slice(i, j);
      const c = text[j]!;
      if (c === '"') return [out, j + 1];
      if (c !== "\\") fail("Invalid control character at", j);
      j++;
      if (j >= n) fail("Unterminated string starting at", begin - 1);
      const esc = text[j]!;
      if (esc !== "u") {
        const ch = ESCAPES[esc];
        if (ch === undefined) fail("Invalid \\escape", j - 1);
        out += ch;
        i = j + 1;
        continue;
      }
      let end = j + 5;
      if (end >= n) fail("Invalid \\uXXXX escape", j);
      const hex = text.slice(j + 1, end);
      if (!HEX.test(hex)) fail("Invalid \\uXXXX escape", end - 5);
      let code = parseInt(hex, 16);
      if (code >= 0xd800 && code <= 0xdbff && end + 6 < n && text[end] === "\\" && text[end + 1] === "u") {
        const hex2 = text.slice(end + 2, end + 6);
        if (!HEX.test(hex2)) fail("Invalid \\uXXXX escape", end + 1);
        const low = parseInt(hex2, 16);
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          end += 6;
        }
      }
      out += String.fromCodePoint(code);
      i = end;
    }
  }

  // Returns [value, next] or null where Python raises StopIteration ("Expecting value" at i).
  function scanOnce(i: number): [PyValue, number] | null {
    if (i >= n) return null;
    const c = text[i]!;
    if (c === '"') return scanString(i + 1);
    if (c === "{") return parseObject(i + 1);
    if (c === "[") return parseArray(i + 1);
    if (c === "n" && text.startsWith("null", i)) return [null, i + 4];
    if (c === "t" && text.startsWith("true", i)) return [true, i + 4];
    if (c === "f" && text.startsWith("false", i)) return [false, i + 5];
    if (c === "N" && text.startsWith("NaN", i)) return [NaN, i + 3];
    if (c === "I" && text.startsWith("Infinity", i)) return [Infinity, i + 8];
    if (c === "-" && text.startsWith("-Infinity", i)) return [-Infinity, i + 9];
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return null;
    const end = i + m[0].length;
    if (m[2] === undefined && m[3] === undefined) {
      const digits = m[1]!.replace("-", "").length;
      if (digits > INT_MAX_STR_DIGITS)
        throw new PyJsonError(
          `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: ` +
            `value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`,
          cp(i),
          "int-limit",
        );
      return [BigInt(m[1]!), end];
    }
    return [Number(m[0]), end];
  }

  const value = (i: number): [PyValue, number] => scanOnce(i) ?? fail("Expecting value", i);

  function parseObject(start: number): [PyValue, number] {
    const obj: { [k: string]: PyValue } = {};
    let i = skip(start);
    if (i >= n || text[i] !== "}") {
      for (;;) {
        if (i >= n || text[i] !== '"') fail("Expecting property name enclosed in double quotes", i);
        const [key, afterKey] = scanString(i + 1);
        i = skip(afterKey);
        if (i >= n || text[i] !== ":") fail("Expecting ':' delimiter", i);
        i = skip(i + 1);
        const [v, next] = value(i);
        setMember(obj, key, v);
        i = skip(next);
        if (i < n && text[i] === "}") break;
        if (i >= n || text[i] !== ",") fail("Expecting ',' delimiter", i);
        i = skip(i + 1);
      }
    }
    return [obj, i + 1];
  }

  function parseArray(start: number): [PyValue, number] {
    const arr: PyValue[] = [];
    let i = skip(start);
    if (i >= n || text[i] !== "]") {
      for (;;) {
        const [v, next] = value(i);
        arr.push(v);
        i = skip(next);
        if (i < n && text[i] === "]") break;
        if (i >= n || text[i] !== ",") fail("Expecting ',' delimiter", i);
        i = skip(i + 1);
      }
    }
    return [arr, i + 1];
  }

  if (text.startsWith("\ufeff")) fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
  const [v, end] = value(skip(0));
  const rest = skip(end);
  if (rest !== n) fail("Extra data", rest);
  return v;
}

/** Whether Python's json.loads accepts the text. */
export function isPyJson(text: string): boolean {
  try {
    pyJsonLoads(text);
    return true;
  } catch {
    return false;
  }
}

/** The JavaScript view of a loaded value (integers as numbers, as JSON.parse gives them). */
export function toJs(v: PyValue): unknown {
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(toJs);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(out, k, { value: toJs(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}
