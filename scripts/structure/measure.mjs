#!/usr/bin/env node
// Measures the product code's shape: the import graph against the floors and the runner's rooms
// (scripts/structure/floors.json), long functions, long parameter lists, single-letter names, how many
// functions have a single caller, the build command's length, and lines too wide. The counters behind the
// structural goals in docs/architecture.md; tests/structure/shape.test.ts and tests/structure/layers.test.ts
// assert on them through this module.
// `--json` prints them as data. Product code is src/, stages/, tasks/ and bin/ (tests and scripts are
// counted only for the width of their lines).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ROOTS = ["src", "stages", "tasks", "bin"];
/** Where the width of lines is counted: the product code, its tests (fixtures too) and the scripts. */
const LINE_ROOTS = [...ROOTS, "tests", "scripts"];
/** A line of this many columns or more breaks the house rules (lines < 110 columns). */
export const COLUMN_LIMIT = 110;
/** The single letters the house rules allow: a loop index, a caught error, an unknown value. */
const KEPT_LETTERS = new Set(["i", "e", "x"]);
/** More parameters than this want a context object (the house rules). */
export const MAX_PARAMETERS = 5;
const BUILD_COMMAND = "src/cli/commands/build.ts";

/** TypeScript and JavaScript of every module kind (.ts .mts .cts .js .mjs .cjs), and their declarations. */
const CODE = /\.[cm]?[jt]s$/;
const DECLARATION = /\.d\.[cm]?ts$/;

function sourceFiles(dir, declarations) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path, declarations);
    return CODE.test(name) && (declarations || !DECLARATION.test(name)) ? [path] : [];
  });
}

const filesUnder = (repo, roots, declarations = false) =>
  roots
    .filter((root) => existsSync(join(repo, root)))
    .flatMap((root) => sourceFiles(join(repo, root), declarations));

export const productFiles = (repo = REPO) => filesUnder(repo, ROOTS);

/** Lines of COLUMN_LIMIT columns or more, as `file:line (N columns)`. Columns are code points, as an editor
 *  counts them: `é` is one column, though two bytes. */
export function longLines(repo = REPO) {
  return filesUnder(repo, LINE_ROOTS, true).flatMap((file) => {
    const path = relative(repo, file);
    return readFileSync(file, "utf8")
      .split("\n")
      .map((text, index) => ({ line: index + 1, columns: [...text].length }))
      .filter((entry) => entry.columns >= COLUMN_LIMIT)
      .map((entry) => `${path}:${entry.line} (${entry.columns} columns)`);
  });
}

/** The folder a repository-relative path counts in: src/<room>, or the top folder (stages, tasks, bin). */
export function folderOf(path) {
  const parts = path.split("/");
  if (parts[0] !== "src") return parts[0];
  return parts.length > 2 ? `src/${parts[1]}` : "src";
}

/** The runner room of a repository-relative path: src/runner/<room>, src/runner for a file at the runner's
 *  top (in no room), or null outside the runner. */
export function roomOf(path) {
  const parts = path.split("/");
  if (parts[0] !== "src" || parts[1] !== "runner") return null;
  return parts.length > 3 ? `src/runner/${parts[2]}` : "src/runner";
}

/** floors.json as two maps, folder -> floor and room -> level, each counted from the bottom. */
export function readStructure(repo = REPO) {
  const config = JSON.parse(readFileSync(join(repo, "scripts/structure/floors.json"), "utf8"));
  const levels = (list) =>
    new Map(list.flatMap((level, index) => level.folders.map((folder) => [folder, index])));
  return { floors: levels(config.floors), rooms: levels(config.rooms) };
}

function functionName(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return "(anonymous)";
}

/** A function with a body: a declaration, expression, arrow, method, constructor or accessor (not a
 *  signature or an overload). */
const isFunction = (node) =>
  ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && "body" in node && Boolean(node.body);

/** Parameters a caller passes: `this` (a type annotation only) is not one. */
const parameterCount = (node) =>
  node.parameters.filter((parameter) => !(ts.isIdentifier(parameter.name) && parameter.name.text === "this"))
    .length;

function bindingNames(name) {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) =>
    ts.isOmittedExpression(element) ? [] : bindingNames(element.name),
  );
}

function importSpecifiers(source) {
  const found = [];
  const visit = (node) => {
    const isImport = ts.isImportDeclaration(node) || ts.isExportDeclaration(node);
    if (isImport && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node)
        ? Boolean(node.importClause?.isTypeOnly) || allNamedTypeOnly(node.importClause)
        : node.isTypeOnly;
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument))
        found.push({ specifier: argument.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function allNamedTypeOnly(clause) {
  if (!clause || clause.name) return false;
  const bindings = clause.namedBindings;
  return Boolean(
    bindings &&
      ts.isNamedImports(bindings) &&
      bindings.elements.length > 0 &&
      bindings.elements.every((element) => element.isTypeOnly),
  );
}

function resolveImport(fromFile, specifier) {
  if (!specifier.startsWith(".")) return undefined;
  const target = resolve(dirname(fromFile), specifier);
  return target.replace(/\.js$/, ".ts");
}

/** One file's functions (with their length and parameter count), names and import edges. */
function measureFile(repo, file, into) {
  const text = readFileSync(file, "utf8");
  const path = relative(repo, file);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (position) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node) => {
    if (isFunction(node)) {
      const line = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - line + 1;
      into.functions.push({
        file: path,
        line,
        name: functionName(node),
        lines,
        params: parameterCount(node),
      });
    }
    if (ts.isVariableDeclaration(node) || ts.isParameter(node)) {
      const line = lineOf(node.getStart(source));
      for (const name of bindingNames(node.name)) into.names.push({ file: path, line, name });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const { specifier, typeOnly } of importSpecifiers(source)) {
    const target = resolveImport(file, specifier);
    if (target) into.edges.push({ from: path, to: relative(repo, target), typeOnly });
  }
  return text.split("\n").length;
}

export function measure(repo = REPO) {
  const files = productFiles(repo);
  const into = { functions: [], names: [], edges: [] };
  let lines = 0;
  for (const file of files) lines += measureFile(repo, file, into);
  return { files: files.length, lines, ...into };
}

/** Strongly connected groups (Tarjan) of more than one member, in a graph given as node -> next nodes. */
function stronglyConnected(graph) {
  let index = 0;
  const order = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  const connect = (node) => {
    order.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)) {
      if (!order.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), order.get(next)));
    }
    if (low.get(node) !== order.get(node)) return;
    const group = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const node of graph.keys()) if (!order.has(node)) connect(node);
  return groups;
}

/** Import cycles between the groups `groupOf` puts files in (null: a file of no group, left out). */
function groupCycles(edges, groupOf) {
  const graph = new Map();
  for (const edge of edges) {
    const from = groupOf(edge.from);
    const to = groupOf(edge.to);
    if (from === null || to === null || from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    if (!graph.has(to)) graph.set(to, new Set());
    graph.get(from).add(to);
  }
  return stronglyConnected(graph);
}

/** Strongly connected groups of folders, each of more than one folder. */
export const folderCycles = (edges) => groupCycles(edges, folderOf);

/** Strongly connected groups of the runner's rooms, each of more than one room. */
export const roomCycles = (edges) => groupCycles(edges, roomOf);

/** Edges that run up: from a group on a lower level to one on a higher level (a group with no level counts
 *  as the bottom one; the layers test names such groups apart). */
export function upward(edges, groupOf, levels) {
  const level = (path) => levels.get(groupOf(path)) ?? 0;
  return edges
    .filter((edge) => groupOf(edge.from) !== null && groupOf(edge.to) !== null)
    .filter((edge) => level(edge.to) > level(edge.from))
    .map((edge) => `${edge.from} -> ${edge.to}${edge.typeOnly ? " (type)" : ""}`);
}

/** Groups that files of the edges stand in but the levels do not list. */
export function unplaced(edges, groupOf, levels) {
  const groups = new Set(edges.flatMap((edge) => [groupOf(edge.from), groupOf(edge.to)]));
  return [...groups].filter((group) => group !== null && !levels.has(group)).sort();
}

/** Functions over `limit` lines, longest first, as `file:line name (length)`. */
const longFunctions = (functions, limit) =>
  functions
    .filter((fn) => fn.lines > limit)
    .sort((left, right) => right.lines - left.lines)
    .map((fn) => `${fn.file}:${fn.line} ${fn.name} (${fn.lines} lines)`);

function lettersSummary(names) {
  const single = names.filter((entry) => entry.name.length === 1);
  const unkept = single.filter((entry) => !KEPT_LETTERS.has(entry.name));
  const share = (part) => Math.round((1000 * part.length) / names.length) / 10;
  return {
    names: names.length,
    singleLetter: single.length,
    singleLetterPercent: share(single),
    singleLetterOutsideKept: unkept.map((entry) => `${entry.file}:${entry.line} ${entry.name}`),
    singleLetterOutsideKeptPercent: share(unkept),
  };
}

function buildCommandLines(repo) {
  const path = join(repo, BUILD_COMMAND);
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").length - 1 : null;
}

/** The counters, from `measure`'s result (and `callers`' when given). */
export function summary(result, structure = readStructure(), callerShare = null, repo = REPO) {
  return {
    files: result.files,
    lines: result.lines,
    functions: result.functions.length,
    importsUpFloor: upward(result.edges, folderOf, structure.floors),
    folderCycles: folderCycles(result.edges),
    valueFolderCycles: folderCycles(result.edges.filter((edge) => !edge.typeOnly)),
    roomCycles: roomCycles(result.edges),
    importsUpRoom: upward(result.edges, roomOf, structure.rooms),
    functionsOverFiveParameters: result.functions
      .filter((fn) => fn.params > MAX_PARAMETERS)
      .sort((left, right) => right.params - left.params)
      .map((fn) => `${fn.file}:${fn.line} ${fn.name} (${fn.params} parameters)`),
    functionsOver100: longFunctions(result.functions, 100),
    functionsOver60: longFunctions(result.functions, 60),
    ...lettersSummary(result.names),
    singleCaller: callerShare,
    buildCommandLines: buildCommandLines(repo),
    longLines: longLines(repo),
  };
}

/** The counters as lines of text, each list under its count. */
export function report(facts) {
  const out = [`product code: ${facts.files} files, ${facts.lines} lines, ${facts.functions} functions`];
  const list = (title, items) => {
    out.push(`${title}: ${items.length}`);
    for (const item of items) out.push(`  ${Array.isArray(item) ? item.join(" ") : item}`);
  };
  list("imports up a floor", facts.importsUpFloor);
  list("folder-level import cycles (all imports)", facts.folderCycles);
  list("folder-level import cycles (value imports)", facts.valueFolderCycles);
  list("runner room cycles (all imports)", facts.roomCycles);
  list("imports up a runner room", facts.importsUpRoom);
  list(`functions over ${MAX_PARAMETERS} parameters`, facts.functionsOverFiveParameters);
  out.push(`functions over 100 lines: ${facts.functionsOver100.length}`);
  list("functions over 60 lines", facts.functionsOver60);
  const outside = `${facts.singleLetterOutsideKept.length} (${facts.singleLetterOutsideKeptPercent} %)`;
  out.push(
    `single-letter names: ${facts.singleLetter} of ${facts.names} (${facts.singleLetterPercent} %); ` +
      `outside i e x: ${outside}`,
  );
  for (const name of facts.singleLetterOutsideKept) out.push(`  ${name}`);
  if (facts.singleCaller) {
    const { single, called, uncalled, percent } = facts.singleCaller;
    out.push(
      `functions with a single caller: ${single} of ${called} called in product code (${percent} %); ` +
        `${uncalled} named functions called from no product code`,
    );
  }
  out.push(`build command (${BUILD_COMMAND}): ${facts.buildCommandLines ?? "absent"} lines`);
  list(`lines of ${COLUMN_LIMIT} columns or more (product code, tests, scripts)`, facts.longLines);
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { callers } = await import("./callers.mjs");
  const fast = process.argv.includes("--fast");
  const facts = summary(measure(), readStructure(), fast ? null : callers(REPO, productFiles(REPO)));
  console.log(process.argv.includes("--json") ? JSON.stringify(facts, null, 2) : report(facts).join("\n"));
}
