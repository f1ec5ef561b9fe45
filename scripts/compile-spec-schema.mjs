#!/usr/bin/env node
// Compiles specs/spec.schema.json into a standalone validator (dist/spec-validator.cjs) at build time,
// so that a build does not pay for compiling the schema with ajv on every start.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Ajv from "ajv";
import standaloneCode from "ajv/dist/standalone/index.js";

const root = resolve(import.meta.dirname, "..");
const schema = JSON.parse(readFileSync(resolve(root, "specs/spec.schema.json"), "utf8"));
const ajv = new Ajv({ allErrors: true, strict: false, code: { source: true } });
const out = resolve(root, "dist/spec-validator.cjs");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, standaloneCode.default(ajv, ajv.compile(schema)));
