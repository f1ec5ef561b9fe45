// A task's reply schema as Gemini's responseSchema (src/model/gemini-schema.ts): voice-command's schema
// converts into Google's Schema subset (valid against the request schema written from Google's reference),
// with its nullable fields, enums and property order kept; a keyword with no equivalent refuses, naming its
// place.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { REPO, testData } from "../support/helpers.js";
import { geminiSchema } from "../../src/model/gemini-schema.js";
import { UnsendableRequest } from "../../src/model/protocol.js";
import type { Json } from "../../src/util/json.js";

const Ajv = createRequire(import.meta.url)("ajv") as typeof import("ajv").default;
const REQUEST = JSON.parse(
  readFileSync(testData("gemini-request", "generate-content-request.schema.json"), "utf8"),
);
const ajv = new Ajv({ strict: false }).addSchema(REQUEST, "request");
const validSchema = ajv.getSchema("request#/definitions/schema")!;
const VOICE = JSON.parse(
  readFileSync(`${REPO}/specs/voice-command/robot_command.schema.json`, "utf8"),
) as Json;

describe("a reply schema as Gemini's responseSchema", () => {
  const converted = geminiSchema(VOICE) as Record<string, any>; // eslint-disable-line

  it("is a Schema of Google's subset", () => {
    expect(validSchema(converted), JSON.stringify(validSchema.errors)).toBe(true);
    expect(JSON.stringify(converted)).not.toContain("additionalProperties");
  });

  it("keeps the shape: types, required, enums, nullable fields and the written order", () => {
    expect(converted.type).toBe("OBJECT");
    expect(converted.required).toEqual(["response", "actions", "message"]);
    expect(converted.propertyOrdering).toEqual(["response", "actions", "message"]);
    expect(converted.properties.response).toEqual({
      type: "STRING",
      enum: ["execute", "clarify", "reject"],
    });
    const action = converted.properties.actions.items;
    expect(action.propertyOrdering).toEqual(["type", "target", "instrument", "direction", "magnitude"]);
    expect(action.properties.target).toEqual({ type: "STRING", nullable: true });
    expect(action.properties.magnitude).toEqual({
      type: "STRING",
      nullable: true,
      enum: ["small", "medium", "large"],
    });
  });

  it("takes an anyOf of one schema and null as that schema, nullable", () => {
    const schema: Json = {
      anyOf: [{ type: "array", items: { type: "integer" } }, { type: "null" }],
      description: "d",
    };
    expect(geminiSchema(schema)).toEqual({
      nullable: true,
      description: "d",
      type: "ARRAY",
      items: { type: "INTEGER" },
    });
  });

  it.each([
    [{ type: "object", properties: { a: { oneOf: [{ type: "string" }] } } }, "/properties/a/oneOf"],
    [{ type: "object", properties: { a: { const: "x" } } }, "/properties/a/const"],
    [{ type: ["string", "number"] }, "/type"],
    [{ type: "string", enum: ["a", 1] }, "/enum"],
  ])("refuses %j, naming %s", (schema, where) => {
    let thrown: unknown = null;
    try {
      geminiSchema(schema as Json);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(UnsendableRequest);
    expect((thrown as Error).message).toContain(where);
  });
});
