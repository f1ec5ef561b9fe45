// Python's json.loads (CPython 3.11, its C scanner), ported: the same accepted text (NaN, Infinity and
// -Infinity are numbers; raw control characters in strings are refused), the same error message for the same
// first fault (HELM retries on exactly "Expecting ',' delimiter"), integers as bigint and floats as number
// (Python tells 1 from 1.0), duplicate keys last-wins. Positions are in code points, as Python's. Checked
// against CPython by tests/spec/python-json.test.ts (fixtures from scripts/reference/python_json_ref.py).
import type { PyValue } from "./pyjson.js";

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
export function setMember(obj: { [member: string]: PyValue }, key: string, value: PyValue): void {
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
  return new PyJsonScanner(text).document();
}

/** The scanner's state: the text and its length; each method takes an index and returns the next. */
class PyJsonScanner {
  private readonly n: number;

  constructor(private readonly text: string) {
    this.n = text.length;
  }

  document(): PyValue {
    if (this.text.startsWith("\ufeff")) this.fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
    const [value, end] = this.value(this.skip(0));
    const rest = this.skip(end);
    if (rest !== this.n) this.fail("Extra data", rest);
    return value;
  }

  /** A UTF-16 index as Python's (code point) index. */
  private codePoints(unit: number): number {
    return [...this.text.slice(0, unit)].length;
  }

  private fail(message: string, unit: number): never {
    throw new PyJsonError(message, this.codePoints(unit));
  }

  private skip(i: number): number {
    while (i < this.n && WS.has(this.text[i]!)) i++;
    return i;
  }

  private value(i: number): [PyValue, number] {
    return this.scanOnce(i) ?? this.fail("Expecting value", i);
  }

  /** `begin`: the index after the opening quote. */
  private scanString(begin: number): [string, number] {
    const { text, n: length } = this;
    let out = "";
    let i = begin;
    for (;;) {
      let end = i;
      while (end < length) {
        const code = text.charCodeAt(end);
        if (code === 0x22 || code === 0x5c || code < 0x20) break;
        end++;
      }
      if (end >= length) this.fail("Unterminated string starting at", begin - 1);
      out += text.slice(i, end);
      const char = text[end]!;
      if (char === '"') return [out, end + 1];
      if (char !== "\\") this.fail("Invalid control character at", end);
      end++;
      if (end >= length) this.fail("Unterminated string starting at", begin - 1);
      const [decoded, next] = this.escape(end);
      out += decoded;
      i = next;
    }
  }

  /** The escape whose letter stands at `j` (after the backslash): its text and the index after it. */
  private escape(at: number): [string, number] {
    const { text, n: length } = this;
    const esc = text[at]!;
    if (esc !== "u") {
      const char = ESCAPES[esc];
      if (char === undefined) this.fail("Invalid \\escape", at - 1);
      return [char, at + 1];
    }
    let end = at + 5;
    if (end >= length) this.fail("Invalid \\uXXXX escape", at);
    const hex = text.slice(at + 1, end);
    if (!HEX.test(hex)) this.fail("Invalid \\uXXXX escape", end - 5);
    let code = parseInt(hex, 16);
    if (
      code >= 0xd800 &&
      code <= 0xdbff &&
      end + 6 < length &&
      text[end] === "\\" &&
      text[end + 1] === "u"
    ) {
      const hex2 = text.slice(end + 2, end + 6);
      if (!HEX.test(hex2)) this.fail("Invalid \\uXXXX escape", end + 1);
      const low = parseInt(hex2, 16);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        end += 6;
      }
    }
    return [String.fromCodePoint(code), end];
  }

  /** [value, next], or null where Python raises StopIteration ("Expecting value" at i). */
  private scanOnce(i: number): [PyValue, number] | null {
    const { text } = this;
    if (i >= this.n) return null;
    const char = text[i]!;
    if (char === '"') return this.scanString(i + 1);
    if (char === "{") return this.parseObject(i + 1);
    if (char === "[") return this.parseArray(i + 1);
    if (char === "n" && text.startsWith("null", i)) return [null, i + 4];
    if (char === "t" && text.startsWith("true", i)) return [true, i + 4];
    if (char === "f" && text.startsWith("false", i)) return [false, i + 5];
    if (char === "N" && text.startsWith("NaN", i)) return [NaN, i + 3];
    if (char === "I" && text.startsWith("Infinity", i)) return [Infinity, i + 8];
    if (char === "-" && text.startsWith("-Infinity", i)) return [-Infinity, i + 9];
    return this.scanNumber(i);
  }

  private scanNumber(i: number): [PyValue, number] | null {
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(this.text);
    if (!match) return null;
    const end = i + match[0].length;
    if (match[2] !== undefined || match[3] !== undefined) return [Number(match[0]), end];
    const digits = match[1]!.replace("-", "").length;
    if (digits > INT_MAX_STR_DIGITS)
      throw new PyJsonError(
        `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: ` +
          `value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`,
        this.codePoints(i),
        "int-limit",
      );
    return [BigInt(match[1]!), end];
  }

  private parseObject(start: number): [PyValue, number] {
    const { text, n: length } = this;
    const obj: { [member: string]: PyValue } = {};
    let i = this.skip(start);
    if (i >= length || text[i] !== "}") {
      for (;;) {
        if (i >= length || text[i] !== '"')
          this.fail("Expecting property name enclosed in double quotes", i);
        const [key, afterKey] = this.scanString(i + 1);
        i = this.skip(afterKey);
        if (i >= length || text[i] !== ":") this.fail("Expecting ':' delimiter", i);
        i = this.skip(i + 1);
        const [member, next] = this.value(i);
        setMember(obj, key, member);
        i = this.skip(next);
        if (i < length && text[i] === "}") break;
        if (i >= length || text[i] !== ",") this.fail("Expecting ',' delimiter", i);
        i = this.skip(i + 1);
      }
    }
    return [obj, i + 1];
  }

  private parseArray(start: number): [PyValue, number] {
    const { text, n: length } = this;
    const arr: PyValue[] = [];
    let i = this.skip(start);
    if (i >= length || text[i] !== "]") {
      for (;;) {
        const [element, next] = this.value(i);
        arr.push(element);
        i = this.skip(next);
        if (i < length && text[i] === "]") break;
        if (i >= length || text[i] !== ",") this.fail("Expecting ',' delimiter", i);
        i = this.skip(i + 1);
      }
    }
    return [arr, i + 1];
  }
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
export function toJs(value: PyValue): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(toJs);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, x] of Object.entries(value))
      Object.defineProperty(out, key, {
        value: toJs(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return value;
}
