// Validates a parsed document against a JSON schema compiled at build time
// (scripts/compile-spec-schema.mjs); each error becomes a diagnostic at the offending place
// (file:line:column), unknown keys with the known ones.
import { resolve } from "node:path";
import type { ErrorObject } from "ajv";
import { diagnosticAt, type SourceDoc } from "./document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import { escapePointer } from "../util/json.js";
import { installRoot } from "../util/paths.js";
import { factsOf } from "../hash/code-memo.js";
import { sha256Hex } from "../hash/sha256.js";

export interface Schema {
  validator: string; // dist/…-validator.cjs
  source: string; // the schema file, named in fixes
}

export const SPEC_SCHEMA: Schema = {
  validator: "dist/spec-validator.cjs",
  source: "specs/spec.schema.json",
};
export const REGISTRY_SCHEMA: Schema = {
  validator: "dist/registry-validator.cjs",
  source: "registry/registry.schema.json",
};

type Validator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };
const validators = new Map<string, Validator>();

function validatorOf(schema: Schema): Validator {
  let validator = validators.get(schema.validator);
  if (!validator) {
    const mod = require(resolve(installRoot(), schema.validator)) as Validator | { default: Validator };
    validator = typeof mod === "function" ? mod : mod.default;
    validators.set(schema.validator, validator);
  }
  return validator;
}

/** The sha256 of a schema's compiled validator (remembered by stat, see the code memo). */
export function schemaIdentity(schema: Schema): string {
  return factsOf(resolve(installRoot(), schema.validator), "sha256", (bytes) => sha256Hex(bytes));
}

/** Throws a DiagnosticError when `value` does not match; `source` gives positions (parsed only if
 *  needed). */
export function checkSchema(value: unknown, source: () => SourceDoc, schema: Schema): void {
  const validate = validatorOf(schema);
  if (!validate(value))
    throw new DiagnosticError(schemaDiagnostics(source(), validate.errors ?? [], schema));
}

function schemaDiagnostics(src: SourceDoc, errors: ErrorObject[], schema: Schema): Diagnostic[] {
  // oneOf/anyOf report every branch; the most specific error (deepest path) is the useful one.
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const e of errors) {
    if (e.keyword === "oneOf" || e.keyword === "anyOf" || e.keyword === "if") continue;
    let pointer = e.instancePath;
    let message = e.message ?? "is invalid";
    let onKey = false;
    let fix: string | undefined;
    const value = e.data;
    if (e.keyword === "additionalProperties") {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      pointer = `${pointer}/${escapePointer(extra)}`;
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      message = `unknown key \`${extra}\``;
      onKey = true;
      fix = known.length
        ? `remove it or correct its spelling; the known keys here: ${known.join(", ")}`
        : `remove it or correct its spelling (see ${schema.source})`;
    } else if (e.keyword === "required") {
      message = `missing required key \`${(e.params as { missingProperty: string }).missingProperty}\``;
      fix = "add it";
    } else if (e.keyword === "pattern" && String(e.params.pattern).includes("{64}")) {
      message = "is not a SHA-256 pin (64 lowercase hexadecimal characters)";
      fix =
        "copy the pin exactly as published (`sha256sum FILE` prints it), " +
        "or write null to trust on first use";
    } else if (e.keyword === "type") {
      const actual = value === null ? "null" : Array.isArray(value) ? "a list" : `a ${typeof value}`;
      message = `${message}, not ${actual}`;
    } else if (e.keyword === "enum") {
      message = `must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
    }
    const id = `${pointer}|${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(
      diagnosticAt(src, pointer, message, fix ?? `see ${schema.source} for the expected shape`, onKey),
    );
  }
  return out.slice(0, 10);
}
