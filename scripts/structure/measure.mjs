#!/usr/bin/env node
// Measures the product code's shape: long functions, single-letter names and folder-level import cycles.
// The counters behind the structural goals in docs/architecture.md; `--json` prints them as data.
// Product code is src/, stages/, tasks/ and bin/ (tests and scripts are not counted).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ROOTS = ["src", "stages", "tasks", "bin"];
const KEPT_LETTERS = new Set(["i", "j", "k", "e", "x", "y", "n", "_"]);

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The folder a repository-relative path counts in: src/<room>, or the top folder (stages, tasks, bin). */
export function folderOf(path) {
  const parts = path.split("/");
  if (parts[0] !== "src") return parts[0];
  return parts.length > 2 ? `src/${parts[1]}` : "src";
}

function functionName(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return "(anonymous)";
}

const FUNCTION_KINDS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

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
      if (argument && ts.isStringLiteral(argument)) found.push({ specifier: argument.text, typeOnly: false });
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

export function measure(repo = REPO) {
  const files = ROOTS.flatMap((root) => sourceFiles(join(repo, root)));
  const functions = [];
  const names = [];
  const edges = [];
  let lines = 0;
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    lines += text.split("\n").length;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line;
    const visit = (node) => {
      if (FUNCTION_KINDS.has(node.kind)) {
        const length = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
        functions.push({ file: relative(repo, file), name: functionName(node), lines: length });
      }
      if (ts.isVariableDeclaration(node) || ts.isParameter(node)) {
        for (const name of bindingNames(node.name)) names.push({ file: relative(repo, file), name });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    for (const { specifier, typeOnly } of importSpecifiers(source)) {
      const target = resolveImport(file, specifier);
      if (target) edges.push({ from: relative(repo, file), to: relative(repo, target), typeOnly });
    }
  }
  return { files: files.length, lines, functions, names, edges };
}

/** Strongly connected groups of folders (Tarjan), each of more than one folder. */
export function folderCycles(edges) {
  const graph = new Map();
  for (const edge of edges) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to);
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    if (!graph.has(to)) graph.set(to, new Set());
    graph.get(from).add(to);
  }
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

function summary(result) {
  const long = (limit) => result.functions.filter((fn) => fn.lines > limit);
  const single = result.names.filter((entry) => entry.name.length === 1);
  const unkept = single.filter((entry) => !KEPT_LETTERS.has(entry.name));
  const share = (part) => Math.round((1000 * part.length) / result.names.length) / 10;
  return {
    files: result.files,
    lines: result.lines,
    functionsOver100: long(100).sort((a, b) => b.lines - a.lines),
    functionsOver60: long(60).length,
    names: result.names.length,
    singleLetter: single.length,
    singleLetterPercent: share(single),
    singleLetterOutsideKept: unkept.length,
    singleLetterOutsideKeptPercent: share(unkept),
    folderCycles: folderCycles(result.edges),
    valueFolderCycles: folderCycles(result.edges.filter((edge) => !edge.typeOnly)),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const facts = summary(measure());
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify(facts, null, 2));
  } else {
    console.log(`product code: ${facts.files} files, ${facts.lines} lines`);
    console.log(`functions over 100 lines: ${facts.functionsOver100.length}`);
    for (const fn of facts.functionsOver100) console.log(`  ${fn.lines} ${fn.name} (${fn.file})`);
    console.log(`functions over 60 lines: ${facts.functionsOver60}`);
    const outside = `${facts.singleLetterOutsideKept} (${facts.singleLetterOutsideKeptPercent} %)`;
    console.log(
      `single-letter names: ${facts.singleLetter} of ${facts.names} (${facts.singleLetterPercent} %); ` +
        `outside i j k e x y n _: ${outside}`,
    );
    console.log(`folder-level import cycles (all imports): ${facts.folderCycles.length}`);
    for (const group of facts.folderCycles) console.log(`  ${group.join(" ")}`);
    console.log(`folder-level import cycles (value imports): ${facts.valueFolderCycles.length}`);
    for (const group of facts.valueFolderCycles) console.log(`  ${group.join(" ")}`);
  }
}
