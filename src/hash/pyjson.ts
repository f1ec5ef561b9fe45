// A port of Python's json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False):
// the serialisation medbench.kr hashes specs with (docs: docs/reference/spec-hash.md).
// Integers are bigint and floats are number, because Python tells 1 from 1.0 and JSON.parse cannot.

export type PyValue = null | boolean | string | bigint | number | PyValue[] | { [key: string]: PyValue };

/** Compares two strings by Unicode code point, as Python sorts str (JS sorts UTF-16 units). */
export function compareCodePoints(left: string, right: string): number {
  const shorter = Math.min(left.length, right.length);
  for (let i = 0; i < shorter; i++) {
    const leftCode = left.charCodeAt(i);
    const rightCode = right.charCodeAt(i);
    if (leftCode !== rightCode) return lift(leftCode) - lift(rightCode);
  }
  return left.length - right.length;
}

// Surrogates (U+D800-DFFF) encode code points above U+FFFF, so they must sort after U+E000-FFFF.
function lift(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

export function pyString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  let out = '"';
  for (const ch of text) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (ch < " ") out += "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0");
    else out += ch;
  }
  return out + '"';
}

/** Python's repr(float): the shortest round-trip digits, laid out as Python lays them out. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest digits that round-trip.
  const match = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(Math.abs(x).toExponential());
  if (!match) throw new Error(`cannot format float ${x}`);
  const digits = match[1]! + (match[2] ?? "");
  const exp = Number(match[3]);
  if (exp < -4 || exp >= 16) {
    const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    const e = Math.abs(exp).toString().padStart(2, "0");
    return `${sign}${mantissa}e${exp < 0 ? "-" : "+"}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intLen = exp + 1;
  if (digits.length <= intLen) return `${sign}${digits}${"0".repeat(intLen - digits.length)}.0`;
  return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}

export function pyDumps(value: PyValue): string {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "string") return pyString(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return pyFloatRepr(value);
  if (Array.isArray(value)) return "[" + value.map(pyDumps).join(",") + "]";
  const keys = Object.keys(value).sort(compareCodePoints);
  return "{" + keys.map((key) => pyString(key) + ":" + pyDumps(value[key]!)).join(",") + "}";
}

/** Converts a plain JS value (integral numbers are ints) for hashing records we build ourselves. */
export function fromPlain(value: unknown): PyValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string" || typeof value === "bigint") return value;
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(fromPlain);
  if (typeof value === "object") {
    const out: { [key: string]: PyValue } = {};
    for (const [memberKey, member] of Object.entries(value as Record<string, unknown>)) {
      if (member !== undefined) out[memberKey] = fromPlain(member);
    }
    return out;
  }
  throw new Error(`cannot hash a ${typeof value}`);
}
