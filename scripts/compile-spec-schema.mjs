#!/usr/bin/env node
// Compiles specs/spec.schema.json and registry/registry.schema.json into standalone validators
// (dist/spec-validator.cjs, dist/registry-validator.cjs) at build time, so that a build does not pay for
// compiling a schema with ajv on every start. `verbose` keeps each error's schema, so that a diagnostic
// about an unknown key can list the known ones. Then records the built-in registry's routes and the
// shipped specs' parses, each checked.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import Ajv from "ajv";
import standaloneCode from "ajv/dist/standalone/index.js";

const root = resolve(import.meta.dirname, "..");
for (const [schemaFile, outFile] of [
  ["specs/spec.schema.json", "dist/spec-validator.cjs"],
  ["registry/registry.schema.json", "dist/registry-validator.cjs"],
]) {
  const schema = JSON.parse(readFileSync(resolve(root, schemaFile), "utf8"));
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, code: { source: true } });
  const out = resolve(root, outFile);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, standaloneCode.default(ajv, ajv.compile(schema)));
}

// The voice-command task's reply schema, as its spec pins it and as the parse stage reads it from the
// requests file (keys sorted): the stage's process checks each reply against it with this code instead of
// loading and compiling ajv (tasks/voice-command/parser.ts). Its options are the parser's own, and the key
// order the same (it orders the checks, so the first error named), so the verdicts and messages are ajv's.
{
  const { sortKeys } = createRequire(import.meta.url)(resolve(root, "dist/src/util/json.js"));
  const text = readFileSync(resolve(root, "specs/voice-command/robot_command.schema.json"), "utf8");
  const schema = sortKeys(JSON.parse(text));
  const ajv = new Ajv({ allErrors: false, strict: false, code: { source: true } });
  const code = standaloneCode.default(ajv, ajv.compile(schema));
  const out = resolve(root, "dist/tasks/voice-command/robot-command-check.cjs");
  const json = JSON.stringify(JSON.stringify(schema));
  const exported = `module.exports = { json: ${json}, validate: module.exports };`;
  writeFileSync(out, `${code}\n${exported}\n`);
}

// The built-in route registry, parsed and checked now (a mistake in it fails the build), with its bytes'
// sha256: a build reads its routes from dist/registry-parsed.json while the YAML is the same, instead of
// parsing it each time (src/model/registry.ts).
{
  const registry = createRequire(import.meta.url)(resolve(root, "dist/src/model/registry.js"));
  const file = resolve(root, "registry/providers.yaml");
  const bytes = readFileSync(file);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const routes = registry.checkedRoutes(bytes, file);
  writeFileSync(resolve(root, registry.PARSED_REGISTRY), `${JSON.stringify({ sha256, routes })}\n`);
}

// The specs medbench ships, parsed and checked now (a mistake in one fails the build), each written as the
// entry a project's cache holds for its bytes: a first build of a shipped spec reads it instead of parsing
// the YAML (src/specfile/load.ts SHIPPED_PARSES).
{
  const load = createRequire(import.meta.url)(resolve(root, "dist/src/specfile/load.js"));
  const out = resolve(root, load.SHIPPED_PARSES);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const name of readdirSync(resolve(root, "specs")).filter((file) => file.endsWith(".yaml"))) {
    const file = resolve(root, "specs", name);
    load.rememberParsedSpec(load.loadSpec(file), file, out);
  }
  if (readdirSync(out).length === 0) throw new Error(`no spec parse written in ${out}`);
}
