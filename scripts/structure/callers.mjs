// Who uses each named function of the product code (a function declaration, a method, or a variable
// holding an arrow or function expression): the TypeScript checker resolves every use of a name, a call or
// the function passed as a value, through imports to its declaration. A caller is the named function the
// use sits in (a callback inside it included), or a module's top level; recursive calls are not counted.
// Uses from tests and scripts are not counted, and neither are calls through an interface (they resolve to
// the interface's method).
import { join } from "node:path";
import ts from "typescript";

const isFunctionNode = (node) =>
  ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && "body" in node && Boolean(node.body);

/** The function node a declaration names, when it is a named function with a body. */
function namedFunction(node) {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name && node.body)
    return node;
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
    const value = node.initializer;
    if (ts.isArrowFunction(value) || ts.isFunctionExpression(value)) return value;
  }
  return null;
}

/** The identifier that names a declaration, an import or an export: not a use. */
const isNaming = (id) =>
  (id.parent.name === id && (namedFunction(id.parent) || ts.isParameter(id.parent))) ||
  ts.isImportSpecifier(id.parent) ||
  ts.isExportSpecifier(id.parent) ||
  ts.isImportClause(id.parent) ||
  ts.isNamespaceImport(id.parent);

/** A function with a name of its own: declared, a method, or held by a variable or a property. */
const hasName = (node) =>
  !(ts.isArrowFunction(node) || ts.isFunctionExpression(node)) ||
  ts.isVariableDeclaration(node.parent) ||
  ts.isPropertyAssignment(node.parent) ||
  ts.isPropertyDeclaration(node.parent);

/** The named function a use sits in (a callback inside it counts as that function), or null at the top. */
function enclosingFunction(node) {
  for (let at = node.parent; at; at = at.parent) if (isFunctionNode(at) && hasName(at)) return at;
  return null;
}

function resolved(checker, id) {
  const symbol = ts.isShorthandPropertyAssignment(id.parent)
    ? checker.getShorthandAssignmentValueSymbol(id.parent)
    : checker.getSymbolAtLocation(id);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) return checker.getAliasedSymbol(symbol);
  return symbol;
}

function productProgram(repo, paths) {
  const config = ts.readConfigFile(join(repo, "tsconfig.json"), ts.sys.readFile).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, repo);
  const files = paths.filter((file) => file.endsWith(".ts"));
  return { program: ts.createProgram(files, { ...options, noEmit: true }), files: new Set(files) };
}

/** Named functions of `paths` (the product code's files) by how many distinct functions use them: single,
 *  called (at least once) and uncalled. */
export function callers(repo, paths) {
  const { program, files } = productProgram(repo, paths);
  const checker = program.getTypeChecker();
  const sources = program.getSourceFiles().filter((source) => files.has(source.fileName));
  const users = new Map(); // declaration -> the functions (or module tops) that use it
  const collect = (node) => {
    if (namedFunction(node)) users.set(node, new Set());
    ts.forEachChild(node, collect);
  };
  sources.forEach(collect);
  const visit = (node) => {
    if (ts.isIdentifier(node) && !isNaming(node)) {
      for (const declaration of resolved(checker, node)?.declarations ?? []) {
        const found = users.get(declaration);
        const user = enclosingFunction(node) ?? node.getSourceFile();
        if (found && user !== namedFunction(declaration)) found.add(user);
      }
    }
    ts.forEachChild(node, visit);
  };
  sources.forEach(visit);
  const counts = [...users.values()].map((set) => set.size);
  const single = counts.filter((count) => count === 1).length;
  const called = counts.filter((count) => count > 0).length;
  const percent = called ? Math.round((1000 * single) / called) / 10 : 0;
  return { single, called, uncalled: counts.length - called, percent };
}
