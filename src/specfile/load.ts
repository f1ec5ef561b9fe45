// Loads a spec file: parse with positions, validate against specs/spec.schema.json, resolve references.
import { existsSync, readFileSync, rmSync } from "../util/builtins.js";
import { isAbsolute, join } from "node:path";
import {
  diagnosticAt,
  nonFiniteNumbers,
  parseSourceDoc,
  pyValueAt,
  readDocumentBytes,
  readSourceDoc,
  type SourceDoc,
} from "./document.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import { HASH_RECIPE, specHash } from "./hash.js";
import { sha256Hex } from "../hash/sha256.js";
import { writeFileAtomic } from "../util/fsutil.js";
import { escapePointer, type Json } from "../util/json.js";
import { checkSchema, schemaIdentity, SPEC_SCHEMA } from "./schema.js";
import { consult } from "../util/consulted.js";
import { installRoot } from "../util/paths.js";
import { fillable, fillResultsDir } from "./results-dir.js";

import { sealed, unseal } from "../hash/sealed.js";

export type InputRef = { stage: string } | { file: string };

/** A results file's source, `STAGE/OUTPUT` (spec `results.files`). */
export function resultSource(target: string): { stage: string; output: string } {
  const i = target.indexOf("/");
  return { stage: target.slice(0, i), output: target.slice(i + 1) };
}

export interface StageDecl {
  name: string;
  kind: string;
  inputs: Record<string, InputRef>;
  params: Json; // references resolved
}

export interface SpecFile {
  src: SourceDoc;
  /** The document's plain value (src.value, without parsing the source when it was remembered). */
  value: unknown;
  path: string; // as the user named it
  slug: string;
  version: number;
  task: string | null;
  spec: Json;
  specHash: string;
  variables: Record<string, Json>;
  stages: StageDecl[];
  results: { dir: string; files: Record<string, string> } | null;
  /** The check over the task's roster (`check:`), as written: src/check/declare.ts reads it. */
  check: Json | null;
}

/** A task document from medbench.kr (an object with `spec`) or a project spec file: its spec_hash. */
export function hashDocument(file: string): { specHash: string; published?: string } {
  const src = readSourceDoc(file);
  const value = src.value as Record<string, unknown> | null;
  if (!value || typeof value !== "object" || !("spec" in value)) {
    throw new DiagnosticError([
      {
        file,
        line: 1,
        column: 1,
        message: "the document has no `spec` member",
        fix: "pass a task document (an object with a `spec` member) or a spec file from specs/",
      },
    ]);
  }
  const published = typeof value.spec_hash === "string" ? value.spec_hash : undefined;
  const spec = value.spec;
  if (spec === null || typeof spec !== "object" || Array.isArray(spec))
    throw new DiagnosticError([
      diagnosticAt(
        src,
        "/spec",
        `\`spec\` is ${Array.isArray(spec) ? "a list" : spec === null ? "null" : `a ${typeof spec}`}` +
          ", not an object",
        "a task document's `spec` is an object (its task, release, prompts, model and metrics)",
      ),
    ]);
  return { specHash: specHash(pyValueAt(src, "/spec")), published };
}

// Named by the spec's bytes, the hash recipe and the schema validator: a spec remembered as valid is valid
// for that validator only, so a hit needs no schema check (nor the validator loaded). `s1`: the entry is
// sealed (src/hash/sealed.ts) and names the sha256 of the spec it was parsed from.
const parsedFile = (dir: string, source: string) =>
  join(dir, `${source}-r${HASH_RECIPE}-${schemaIdentity(SPEC_SCHEMA).slice(0, 16)}-s1.json`);

interface ParsedEntry {
  /** sha256 of the spec file's bytes this was parsed from. */
  source: string;
  value: unknown;
  specHash: string;
}

/** The parse in `file` of a spec whose bytes hash to `source`: null when there is none, its problem when it
 *  is not whole or not theirs. */
function parsedEntry(file: string, source: string, shown: string): ParsedEntry | { problem: string } | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null; // not parsed before
  }
  const opened = unseal(text);
  let entry: ParsedEntry | null = null;
  if ("body" in opened)
    try {
      entry = JSON.parse(opened.body) as ParsedEntry;
    } catch {
      /* sealed but not JSON: not ours either */
    }
  if (entry && entry.source === source && typeof entry.specHash === "string") return entry;
  return { problem: "problem" in opened ? opened.problem : `it is not the parse of ${shown}` };
}

/** The remembered parse of a spec whose bytes hash to `source`, if one was written whole for it. An entry
 *  edited since (or for other bytes) is removed with a warning: the spec is parsed again. */
function rememberedParse(file: string, source: string, shown: string): ParsedEntry | null {
  const found = parsedEntry(file, source, shown);
  if (found === null || !("problem" in found)) return found;
  const why = found.problem;
  process.stderr.write(
    `warning: the parsed-spec cache entry ${file} is discarded: ${why}; ${shown} is parsed again\n`,
  );
  try {
    rmSync(file, { force: true });
  } catch {
    /* removed by another build meanwhile */
  }
  return null;
}

/** The specs medbench ships (specs/*.yaml), parsed and checked as medbench is built
 *  (scripts/compile-spec-schema.mjs), each an entry as a project's cache holds it: a first build of a
 *  shipped spec parses no YAML and loads no validator (20 to 40 ms of its start-up). */
export const SHIPPED_PARSES = "dist/parsed-specs";

/** The shipped parse of the spec whose bytes hash to `source`, if medbench ships one: read only (not a
 *  shipped spec's bytes, or not built: parsed). */
function shippedParse(source: string): ParsedEntry | null {
  const found = parsedEntry(parsedFile(join(installRoot(), SHIPPED_PARSES), source), source, "");
  return found && !("problem" in found) ? found : null;
}

/** Loads a spec file. With `parsedCache` (a folder), a spec whose bytes were parsed before is taken from
 *  there (its plain value and spec_hash), so a no-op build neither loads nor runs the YAML parser; the
 *  source is parsed only if a diagnostic needs a position. */
export function loadSpec(
  path: string,
  variables: Record<string, Json> = {},
  displayName = path,
  parsedCache?: string,
): SpecFile {
  consult(path);
  if (!parsedCache) return loadSpecFromSource(readSourceDoc(path, displayName), variables);
  let bytes: Buffer;
  try {
    bytes = readDocumentBytes(path, displayName);
  } catch {
    return loadSpecFromSource(readSourceDoc(path, displayName), variables);
  }
  let parsed: SourceDoc | null = null;
  const source = () => (parsed ??= parseSourceDoc(bytes, displayName));
  const sourceHash = sha256Hex(bytes);
  const hit =
    rememberedParse(parsedFile(parsedCache, sourceHash), sourceHash, displayName) ??
    shippedParse(sourceHash);
  return hit
    ? loadSpecFrom({
        source,
        plain: hit.value,
        specHash: hit.specHash,
        file: displayName,
        overrides: variables,
      })
    : loadSpecFromSource(source(), variables);
}

/** After a build went through: remember the parsed spec for the next load (never for a spec that failed). */
export function rememberParsedSpec(spec: SpecFile, path: string, parsedCache: string): void {
  try {
    const source = sha256Hex(readFileSync(path));
    const file = parsedFile(parsedCache, source);
    if (!existsSync(file)) {
      const entry: ParsedEntry = { source, value: spec.value, specHash: spec.specHash };
      writeFileAtomic(file, sealed(JSON.stringify(entry)), parsedCache, false);
    }
  } catch {
    /* a cache, nothing more */
  }
}

export function loadSpecFromSource(src: SourceDoc, overrides: Record<string, Json> = {}): SpecFile {
  const nonFinite = nonFiniteNumbers(src);
  if (nonFinite.length) throw new DiagnosticError(nonFinite);
  checkSchema(src.value, () => src, SPEC_SCHEMA);
  return loadSpecFrom({
    source: () => src,
    plain: src.value,
    specHash: specHash(pyValueAt(src, "/spec")),
    file: src.file,
    overrides,
  });
}

/** A spec's plain value, as the schema lets it be. */
interface SpecValue {
  slug: string;
  version: number;
  task?: string;
  spec: Json;
  spec_hash?: string;
  variables?: Record<string, Json>;
  stages: Record<string, { kind: string; inputs?: Record<string, InputRef>; params?: Json }>;
  results?: { dir: string; files: Record<string, string> };
  check?: Json;
}

interface SpecSource {
  source: () => SourceDoc;
  plain: unknown;
  specHash: string;
  file: string;
  overrides: Record<string, Json>;
}

/** A spec from its plain value, which matches the schema (checked from the source, or remembered so). */
function loadSpecFrom(from: SpecSource): SpecFile {
  const { source, specHash: hash, file, overrides } = from;
  const value = from.plain as SpecValue;
  refuseChangedHash(source, value, hash);
  const variables = variablesWith(value.variables ?? {}, overrides, file);
  const diagnostics: Diagnostic[] = [];
  const stages = declaredStages(value, { src: source, spec: value.spec, vars: variables, out: diagnostics });
  if (value.results)
    diagnostics.push(
      ...resultsPathDiagnostics(source, value.results, value.slug, variables, (name) =>
        overrides[name] !== undefined && overrides[name] !== null ? file : null,
      ),
    );
  if (diagnostics.length) throw new DiagnosticError(diagnostics);
  return {
    get src() {
      return source();
    },
    value: from.plain,
    path: file,
    slug: value.slug,
    version: value.version,
    task: value.task ?? null,
    spec: value.spec,
    specHash: hash,
    variables,
    stages,
    results: value.results ?? null,
    check: value.check ?? null,
  };
}

/** A spec that records a spec_hash must hash to it. */
function refuseChangedHash(source: () => SourceDoc, value: SpecValue, hash: string): void {
  if (!value.spec_hash || value.spec_hash === hash) return;
  throw new DiagnosticError([
    diagnosticAt(
      source(),
      "/spec_hash",
      `the spec hashes to ${hash}, not to the recorded spec_hash ${value.spec_hash}`,
      "the spec was edited: restore the published spec, or update spec_hash if this is a new version " +
        "of the task (and bump `version`)",
    ),
  ]);
}

/** The spec's variables with the command line's values (null: not given); an undeclared one is refused. */
function variablesWith(
  declared: Record<string, Json>,
  overrides: Record<string, Json>,
  file: string,
): Record<string, Json> {
  const variables: Record<string, Json> = { ...declared };
  for (const [name, given] of Object.entries(overrides)) {
    if (!(name in variables) && given !== null) {
      throw new DiagnosticError([
        {
          file,
          message: `the spec declares no variable \`${name}\``,
          fix: `declare it under \`variables:\` or drop the option`,
        },
      ]);
    }
    if (given !== null) variables[name] = given;
  }
  return variables;
}

/** The stages in the spec's order, their parameters' references resolved (unresolved ones in `refs.out`). */
function declaredStages(value: SpecValue, refs: RefScope): StageDecl[] {
  return Object.entries(value.stages).map(([name, stage]) => ({
    name,
    kind: stage.kind,
    inputs: stage.inputs ?? {},
    params: resolveRefs(stage.params ?? {}, `/stages/${escapePointer(name)}/params`, refs),
  }));
}

/**
 * What `{$spec: …}` and `{$var: …}` resolve against;
 * `out` collects the references that resolve to nothing.
 */
export interface RefScope {
  src: () => SourceDoc;
  spec: Json;
  vars: Record<string, Json>;
  out: Diagnostic[];
}

/** `{$spec: /json/pointer}` takes a value from the published spec; `{$var: name}` a build variable. */
export function resolveRefs(value: Json, at: string, refs: RefScope): Json {
  const { src, spec, vars, out } = refs;
  if (Array.isArray(value)) return value.map((x, i) => resolveRefs(x, `${at}/${i}`, refs));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "$spec") {
    const pointer = String(value.$spec);
    const found = lookupPointer(spec, pointer);
    if (found === undefined)
      out.push(
        diagnosticAt(
          src(),
          `${at}/$spec`,
          `the published spec has no field ${pointer}`,
          "name an existing field of `spec:` as a JSON pointer, e.g. /request/max_tokens",
        ),
      );
    return found ?? null;
  }
  if (keys.length === 1 && keys[0] === "$var") {
    const name = String(value.$var);
    if (!(name in vars))
      out.push(
        diagnosticAt(src(), `${at}/$var`, `no variable \`${name}\``, "declare it under `variables:`"),
      );
    return vars[name] ?? null;
  }
  const resolved: { [key: string]: Json } = {};
  for (const key of keys) resolved[key] = resolveRefs(value[key]!, `${at}/${escapePointer(key)}`, refs);
  return resolved;
}

export function lookupPointer(root: Json, pointer: string): Json | undefined {
  if (pointer === "" || pointer === "/") return root;
  let node: Json | undefined = root;
  for (const raw of pointer.slice(1).split("/")) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(part)];
    else if (node !== null && typeof node === "object")
      node = Object.prototype.hasOwnProperty.call(node, part) ? node[part] : undefined;
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** The option that sets a variable on the command line (src/cli/options.ts). */
const OPTION_OF: Record<string, string> = {
  model: "--model",
  judges: "--judge",
  subset: "--subset",
  limit: "--limit",
  configurations: "--configurations",
};

/** A variable of results.dir whose value is a list or a map: at the variable's value in the spec, or named
 *  with the option that set it (`given`: the spec file, when the command line set it). */
function unfillable(
  source: () => SourceDoc,
  template: string,
  variables: Record<string, Json>,
  given: (name: string) => string | null,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [, name] of template.matchAll(/\{([^{}]*)\}/g)) {
    const value = variables[name!];
    if (name === "slug" || fillable(value)) continue;
    const what = Array.isArray(value) ? "a list" : "a map";
    const fix =
      `give ${name} a plain value (a name or a number, e.g. --var ${name}=run1), ` +
      `or leave {${name}} out of results.dir`;
    const file = given(name!);
    const option = OPTION_OF[name!] ?? `--var ${name}=…`;
    if (file)
      out.push({
        file,
        message:
          `results.dir ${template}: {${name}} would be filled from ${what}, given by ${option} ` +
          `(${JSON.stringify(value)}), which names no folder`,
        fix,
      });
    else
      out.push(
        diagnosticAt(
          source(),
          `/variables/${escapePointer(name!)}`,
          `variable ${name} is ${what}, and fills {${name}} of results.dir ${template}: ` +
            `${what} names no folder`,
          fix,
        ),
      );
  }
  return out;
}

/** Results are written inside the project's results/ (results-dir.ts), each file in its results folder. */
function resultsPathDiagnostics(
  source: () => SourceDoc,
  results: { dir: string; files: Record<string, string> },
  slug: string,
  variables: Record<string, Json>,
  given: (name: string) => string | null,
): Diagnostic[] {
  const escapes = (path: string) =>
    isAbsolute(path) || /^[A-Za-z]:/.test(path) || path.split(/[\\/]/).includes("..");
  const out: Diagnostic[] = unfillable(source, results.dir, variables, given);
  const fix = "keep results paths relative and inside the project (no absolute path, no `..`)";
  const dir = fillResultsDir(results.dir, slug, variables);
  if ("message" in dir && !out.length)
    out.push(diagnosticAt(source(), "/results/dir", dir.message, dir.fix));
  for (const name of Object.keys(results.files))
    if (escapes(name) || name.trim() === "")
      out.push(
        diagnosticAt(
          source(),
          `/results/files/${escapePointer(name)}`,
          `results file ${name} leaves the results folder`,
          fix,
          true,
        ),
      );
  return out;
}
