// Reads a YAML or JSON document (YAML 1.2 is a superset of JSON) keeping source positions,
// so that every later error can point at file:line:column, and integer/float as written.
import { readFileSync, statSync } from "../util/builtins.js";
import type { Document, LineCounter, Node } from "yaml";
import { DiagnosticError, fail, type Diagnostic } from "../errors.js";
import type { PyValue } from "../hash/pyjson.js";
import { isPyJson, setMember } from "../hash/python-json.js";

// yaml is loaded when a document is first parsed:
// a no-op build whose spec is known from the cache never needs it.
type Yaml = typeof import("yaml");
let yamlModule: Yaml | null = null;
function yaml(): Yaml {
  return (yamlModule ??= bundledYaml() ?? (require("yaml") as Yaml));
}

/** The package's modules joined into one file as medbench is built (scripts/bundle-vendor.mjs): 9 ms of CPU
 *  to load, the modules one by one 26. Beside the sources (tests) there is none: the package is loaded. */
function bundledYaml(): Yaml | null {
  try {
    return require("../../vendor/yaml.cjs") as Yaml;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND") return null;
    throw e;
  }
}
const isMap = ((node: unknown) => yaml().isMap(node)) as Yaml["isMap"];
const isSeq = ((node: unknown) => yaml().isSeq(node)) as Yaml["isSeq"];
const isScalar = ((node: unknown) => yaml().isScalar(node)) as Yaml["isScalar"];
const isAlias = ((node: unknown) => yaml().isAlias(node)) as Yaml["isAlias"];

export interface SourceDoc {
  file: string; // as the user named it
  text: string;
  doc: Document.Parsed;
  lines: LineCounter;
  value: unknown; // plain JS view
  json: boolean; // Python's json reads the text: NaN, Infinity and -Infinity are then numbers
}

/** A spec, registry or task document is a few hundred KB: a larger file is a mistake (or a hostile one). */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

export function readSourceDoc(file: string, displayName = file): SourceDoc {
  return parseSourceDoc(readDocumentBytes(file, displayName), displayName);
}

/** A document's bytes: a regular file of at most MAX_DOCUMENT_BYTES, else a diagnostic naming it. */
export function readDocumentBytes(file: string, displayName = file): Buffer {
  try {
    // A FIFO or a device (`hash /dev/zero`) would block or never end: only a regular file is read.
    const st = statSync(file);
    if (!st.isFile())
      fail({
        file: displayName,
        message: `not a regular file (${st.isDirectory() ? "a folder" : "a pipe, socket or device"})`,
        fix: "name a spec or task document file",
      });
    if (st.size > MAX_DOCUMENT_BYTES)
      fail({
        file: displayName,
        message:
          `${st.size} bytes: ` +
          "larger than a spec or task document can be " +
          `(${MAX_DOCUMENT_BYTES} bytes)`,
        fix: "name a spec or task document file",
      });
    return readFileSync(file);
  } catch (e) {
    if (e instanceof DiagnosticError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    fail({
      file: displayName,
      message: code === "ENOENT" ? "no such file" : `cannot read it (${code})`,
      fix: "check the path",
    });
  }
}

export function parseSourceDoc(bytes: Uint8Array, file: string): SourceDoc {
  const text = decodedText(bytes, file);
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    // The parser's own unique-key check compares every pair of keys (quadratic: a spec with 500,000 keys
    // never finishes); duplicates are found below with one Set per mapping instead.
    uniqueKeys: false,
    prettyErrors: false,
    strict: true,
  });
  refuseMalformed({ file, text, doc, lines });
  const value = plainValue(doc, file);
  const json = /^[\s]*[{[]/.test(text) && isPyJson(text);
  return { file, text, doc, lines, value, json };
}

/** The document's text: UTF-8, without a byte order mark. */
function decodedText(bytes: Uint8Array, file: string): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const bad = firstInvalidUtf8(bytes);
    fail({
      file,
      line: bad.line,
      column: bad.column,
      message: "the file is not valid UTF-8",
      fix: "save it as UTF-8 (specs hold Korean text and are hashed as UTF-8)",
    });
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

type Parsed = Pick<SourceDoc, "file" | "text" | "doc" | "lines">;

/** Fails at the first syntax error, repeated key or tag medbench does not read, with its place. */
function refuseMalformed({ file, text, doc, lines }: Parsed): void {
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return { file, line, column: col, sourceLine: (text.split("\n")[line - 1] ?? "").replace(/\r$/, "") };
  };
  const format = file.endsWith(".json") ? "JSON" : "YAML";
  const first = doc.errors[0];
  if (first) {
    const message = first.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    fail({
      ...at(first.pos[0]),
      message: `malformed ${format}: ${message}`,
      fix: "correct the syntax at this place (indentation, a missing quote or colon)",
    });
  }
  const duplicate = firstDuplicateKey(doc.contents);
  if (duplicate)
    fail({
      ...at(duplicate.range![0]),
      message: `malformed ${format}: Map keys must be unique`,
      fix: "remove or rename the repeated key",
    });
  const tagged = firstUnknownTag(doc.contents);
  if (tagged)
    fail({
      ...at(tagged.range![0]),
      message: `the YAML tag ${tagged.tag!.replace(/^tag:yaml\.org,2002:/, "!!")} is not one medbench reads`,
      fix:
        "remove the tag: write the plain value " +
        "(only !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)",
    });
}

/** The document as plain values; aliases expanded at most 100 times. */
function plainValue(doc: SourceDoc["doc"], file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // yaml throws a ReferenceError when aliases expand past maxAliasCount (an "alias bomb").
    if (!(e instanceof ReferenceError)) throw e;
    fail({
      file,
      message: `the document expands aliases too often (${e.message.replace(/\.$/, "")})`,
      fix: "write the values out instead of repeating aliases (* references) inside anchored values",
    });
  }
}

/** YAML 1.2's core tags: a value means what it reads. Any other (`!!js/function`, `!!binary`, `!!set`,
 *  a local `!foo`) would be read silently as something else (a string, a Buffer, a Set). */
const CORE_TAGS = new Set(
  ["str", "int", "float", "bool", "null", "map", "seq"].map((tag) => `tag:yaml.org,2002:${tag}`),
);

/** The first node, key or value, with a tag outside YAML 1.2's core schema (depth-first, in order). */
function firstUnknownTag(root: unknown): Node | null {
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop() as Node | null | undefined;
    if (!node || typeof node !== "object") continue;
    if (node.tag && !CORE_TAGS.has(node.tag)) return node;
    if (isMap(node))
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]!.value, node.items[i]!.key);
    else if (isSeq(node)) for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
  }
  return null;
}

/**
 * Every number that is not finite (`.nan`, `.inf`, 1e999), as diagnostics at its place: a level, a
 * temperature or a count that is NaN compares false with every bound, so no range check would refuse it.
 */
export function nonFiniteNumbers(src: SourceDoc): Diagnostic[] {
  const out: Diagnostic[] = [];
  const stack: unknown[] = [src.doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isScalar(node) && typeof node.value === "number" && !Number.isFinite(node.value))
      out.push({
        file: src.file,
        ...positionOf(src, node as Node),
        message: `${(node.source ?? String(node.value)).trim()} is not a finite number`,
        fix: "write a finite number (a spec or registry holds no NaN or infinity)",
      });
    else if (isMap(node)) for (const pair of node.items) stack.push(pair.value);
    else if (isSeq(node)) for (const item of node.items) stack.push(item);
  }
  return out.sort(
    (left, right) => (left.line ?? 0) - (right.line ?? 0) || (left.column ?? 0) - (right.column ?? 0),
  );
}

/** The first key that repeats an earlier key of the same mapping (depth-first, in document order). */
function firstDuplicateKey(root: unknown): Node | null {
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : JSON.stringify(pair.key);
        if (seen.has(key)) return pair.key as Node;
        seen.add(key);
      }
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]!.value);
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    }
  }
  return null;
}

function firstInvalidUtf8(bytes: Uint8Array): { line: number; column: number } {
  // Decode growing prefixes cheaply: find the first byte where a fatal decoder fails.
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < bytes.length; ) {
    const byte = bytes[i]!;
    const len =
      byte < 0x80
        ? 1
        : byte >= 0xc2 && byte < 0xe0
          ? 2
          : byte >= 0xe0 && byte < 0xf0
            ? 3
            : byte >= 0xf0 && byte < 0xf5
              ? 4
              : 0;
    let ok = len > 0 && i + len <= bytes.length;
    for (let offset = 1; ok && offset < len; offset++) ok = (bytes[i + offset]! & 0xc0) === 0x80;
    if (ok && len > 1) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(i, i + len));
      } catch {
        ok = false;
      }
    }
    if (!ok) return { line, column: i - lineStart + 1 };
    if (byte === 0x0a) {
      line++;
      lineStart = i + 1;
    }
    i += len;
  }
  return { line, column: 1 };
}

/** The node at a JSON pointer (or its nearest existing ancestor), for positions. */
export function nodeAt(src: SourceDoc, pointer: string): { node: Node | null; exact: boolean } {
  let node: unknown = src.doc.contents;
  const parts =
    pointer === ""
      ? []
      : pointer
          .slice(1)
          .split("/")
          .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));
  for (const part of parts) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === part,
      );
      if (!pair) return { node: node as Node, exact: false };
      node = pair.value ?? pair.key;
    } else if (isSeq(node)) {
      const item = node.items[Number(part)];
      if (item === undefined) return { node: node as Node, exact: false };
      node = item;
    } else {
      return { node: (node as Node) ?? null, exact: false };
    }
  }
  return { node: (node as Node) ?? null, exact: true };
}

/** The key node of the last pointer segment when it exists (errors about a key underline the key). */
export function keyNodeAt(src: SourceDoc, pointer: string): Node | null {
  const i = pointer.lastIndexOf("/");
  if (i < 0) return null;
  const parent = nodeAt(src, pointer.slice(0, i));
  const name = pointer
    .slice(i + 1)
    .replace(/~1/g, "/")
    .replace(/~0/g, "~");
  if (!parent.exact || !isMap(parent.node)) return null;
  const pair = parent.node.items.find((item) => isScalar(item.key) && String(item.key.value) === name);
  return pair && isScalar(pair.key) ? (pair.key as Node) : null;
}

export function positionOf(
  src: SourceDoc,
  node: Node | null | undefined,
): Pick<Diagnostic, "line" | "column" | "length" | "sourceLine"> {
  const range = node?.range;
  if (!range) return {};
  const { line, col } = src.lines.linePos(range[0]);
  const sourceLine = src.text.split("\n")[line - 1] ?? "";
  const end = src.lines.linePos(range[1]);
  const length = end.line === line ? Math.max(1, end.col - col) : Math.max(1, sourceLine.length - col + 1);
  return { line, column: col, length, sourceLine: sourceLine.replace(/\r$/, "") };
}

export function diagnosticAt(
  src: SourceDoc,
  pointer: string,
  message: string,
  fix?: string,
  onKey = false,
): Diagnostic {
  const keyNode = onKey ? keyNodeAt(src, pointer) : null;
  const { node } = nodeAt(src, pointer);
  const key =
    pointer
      .slice(1)
      .split("/")
      .filter(Boolean)
      .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
      .join(".") || undefined;
  return { file: src.file, key, message, fix, ...positionOf(src, keyNode ?? node) };
}

/** The AST below a pointer as a PyValue: integers as bigint, floats as number, as the source wrote them. */
export function pyValueAt(src: SourceDoc, pointer: string): PyValue {
  const { node, exact } = nodeAt(src, pointer);
  if (!exact) fail({ file: src.file, message: `no ${pointer} in the document` });
  return toPy(node, src);
}

function toPy(node: unknown, src: SourceDoc): PyValue {
  if (isAlias(node)) return toPy(node.resolve(src.doc), src);
  if (isMap(node)) {
    const out: { [key: string]: PyValue } = {};
    for (const pair of node.items) {
      const keyText = isScalar(pair.key) ? pair.key.value : pair.key;
      // `__proto__` too
      setMember(out, noLoneSurrogate(String(keyText), pair.key, src), toPy(pair.value, src));
    }
    return out;
  }
  if (isSeq(node)) return node.items.map((item) => toPy(item, src));
  if (isScalar(node)) {
    const scalar = node.value;
    if (typeof scalar === "string") {
      // Python's json reads these bare words as floats (and writes them back as they are).
      if (src.json && node.type === "PLAIN" && scalar in JSON_CONSTANTS) return JSON_CONSTANTS[scalar]!;
      return noLoneSurrogate(scalar, node, src);
    }
    if (scalar === null || typeof scalar === "boolean") return scalar;
    if (typeof scalar === "number" || typeof scalar === "bigint") {
      const text = (node.source ?? String(scalar)).trim();
      // A plain scalar with a fraction or an exponent is a float; inf/nan are floats too.
      const isFloat =
        typeof scalar === "number" && (/[.eE]/.test(text.replace(/^0x/i, "")) || !Number.isFinite(scalar));
      if (isFloat) return scalar as number;
      return typeof scalar === "bigint" ? scalar : integerOf(text, scalar);
    }
    return String(scalar);
  }
  if (node === null || node === undefined) return null;
  return String(node);
}

const JSON_CONSTANTS: Record<string, number> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Python's recipe cannot encode a lone surrogate as UTF-8 (json.dumps keeps it, .encode raises): refuse. */
function noLoneSurrogate(text: string, node: unknown, src: SourceDoc): string {
  const match = LONE_SURROGATE.exec(text);
  if (!match) return text;
  const unit = match[0].charCodeAt(0).toString(16).toUpperCase();
  fail({
    file: src.file,
    ...positionOf(src, node as Node),
    message:
      `a lone surrogate (\\u${unit}) in a string: it is not a character, and the spec_hash recipe ` +
      "(UTF-8 of Python's json.dumps) cannot encode it",
    fix:
      "write the character it was meant to be (a surrogate pair encodes one character above U+FFFF), " +
      "or remove it",
  });
}

function integerOf(text: string, parsed: number): bigint {
  // Keep every digit of a large integer (Python does), not the rounded double.
  const digits = text.replace(/^\+/, "");
  if (/^-?\d+$/.test(digits)) return BigInt(digits);
  if (/^0x[0-9a-f]+$/i.test(digits)) return BigInt(digits);
  if (/^0o[0-7]+$/i.test(digits)) return BigInt(digits);
  return BigInt(parsed);
}
