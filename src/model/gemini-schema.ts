// A task's reply schema (JSON Schema) as Gemini's responseSchema takes it: Google's Schema object, a subset
// of OpenAPI 3.0 with upper-case type names (https://ai.google.dev/api/caching#Schema). Converted as the
// @google/genai SDK converts one (googleapis/js-genai, src/_transformers.ts processJsonSchema, commit
// 6e9b35c45e21f0d37179a24d29dca01ebed698e6): a null among the types, or an anyOf of one schema and null, is
// `nullable`; `additionalProperties` is dropped (the Schema has no such field). Beyond the SDK: a null among
// an enum's values is dropped too (the enum is of strings; the field is nullable already), and the
// properties' written order goes as `propertyOrdering` (Gemini otherwise orders them alphabetically). A
// keyword the Schema has no equivalent for refuses the request, naming it: a schema is never quietly
// loosened further.
import type { Json } from "../util/json.js";
import { UnsendableRequest } from "./protocol.js";

type Fields = Record<string, Json>;

const TYPES = ["string", "number", "integer", "boolean", "array", "object"];
// Keywords carried over as they are (their meaning is the same in the Schema).
const SAME = [
  "format",
  "title",
  "description",
  "minimum",
  "maximum",
  "pattern",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "required",
  "default",
  "example",
];
// Keywords that say nothing about the reply's shape, or that the Schema cannot say: dropped.
const DROPPED = ["additionalProperties", "$schema", "$comment"];

const isObj = (value: Json | undefined): value is Fields =>
  value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value);

/** The Gemini Schema for a JSON schema; `at` is the pointer shown when a keyword cannot be sent. */
export function geminiSchema(schema: Json, at = ""): Fields {
  if (!isObj(schema)) throw unsendable(`${at || "the schema"} is not an object`);
  let source = schema;
  const out: Fields = {};
  const anyOf = schema.anyOf;
  // {anyOf: [X, {type: null}]}: X, nullable.
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNullType)) {
    out.nullable = true;
    const { anyOf: _anyOf, ...rest } = schema;
    source = { ...rest, ...(anyOf.find((x) => !isNullType(x)) as Fields) };
  }
  for (const [keyword, value] of Object.entries(source)) {
    const where = `${at}/${keyword}`;
    if (keyword === "type") Object.assign(out, typeOf(value, where));
    else if (keyword === "enum") Object.assign(out, enumOf(value, where));
    else if (keyword === "items") out.items = geminiSchema(value, where);
    else if (keyword === "anyOf") out.anyOf = anyOfList(value, where, out);
    else if (keyword === "properties") Object.assign(out, propertiesOf(value, where));
    else if (SAME.includes(keyword)) out[keyword] = value;
    else if (!DROPPED.includes(keyword))
      throw unsendable(`${where}: the keyword ${keyword} has no equivalent in Gemini's responseSchema`);
  }
  return out;
}

const isNullType = (value: Json): boolean => isObj(value) && value.type === "null";

function typeOf(value: Json, where: string): Fields {
  const types = Array.isArray(value) ? value : [value];
  const named = types.filter((type) => type !== "null");
  if (named.length !== 1 || typeof named[0] !== "string" || !TYPES.includes(named[0]))
    throw unsendable(`${where}: the type ${JSON.stringify(value)} is not one type (or one type and null)`);
  return { type: named[0].toUpperCase(), ...(named.length < types.length ? { nullable: true } : {}) };
}

function enumOf(value: Json, where: string): Fields {
  if (!Array.isArray(value)) throw unsendable(`${where} is not a list`);
  const values = value.filter((x) => x !== null);
  if (values.some((x) => typeof x !== "string"))
    throw unsendable(`${where}: Gemini's enum takes strings only`);
  return { enum: values, ...(values.length < value.length ? { nullable: true } : {}) };
}

function anyOfList(value: Json, where: string, out: Fields): Json[] {
  if (!Array.isArray(value)) throw unsendable(`${where} is not a list`);
  if (value.some(isNullType)) out.nullable = true;
  return value.filter((x) => !isNullType(x)).map((x, i) => geminiSchema(x, `${where}/${i}`));
}

function propertiesOf(value: Json, where: string): Fields {
  if (!isObj(value)) throw unsendable(`${where} is not an object`);
  const properties: Fields = {};
  for (const [name, schema] of Object.entries(value))
    properties[name] = geminiSchema(schema, `${where}/${name}`);
  return { properties, propertyOrdering: Object.keys(value) };
}

function unsendable(why: string): UnsendableRequest {
  return new UnsendableRequest(
    `the task's reply schema cannot be sent as Gemini's responseSchema: ${why}`,
    "run the task on a route of another protocol, or write its schema within the subset Gemini takes " +
      "(docs/model-requests.md, Gemini)",
  );
}
