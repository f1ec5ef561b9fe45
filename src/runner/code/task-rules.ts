// What task code may do, checked on its sources before any of it runs, so that a stage's key holds all
// a stage can observe (docs/records.md, "What a stage's key covers"). A task's module computes from its
// arguments and the modules it imports by literal name; it reads no file, process or network itself, reads
// only the environment variables the task declares (keyed by value), and its wiring module (index.ts) only
// wires: nothing it runs at load can change what a part computes. Each breach is refused at
// file:line:column. The checks read the source's syntax tree (TypeScript's parser), remembered per file by
// the code memo, so the compiler is loaded only when a task source changed.
import { lstatSync, readdirSync } from "../../util/builtins.js";
import { join, relative } from "node:path";
import type * as TS from "typescript";
import { DiagnosticError, type Diagnostic } from "../../errors.js";
import { factsOf } from "../../hash/code-memo.js";
import { consult } from "../../util/consulted.js";
import type { Json } from "../../util/json.js";
import { checkedAtBuild } from "./rules-table.js";

/** Builtin modules through which code reads files, processes, the host or the network. */
const FORBIDDEN_MODULES = new Set(
  ["fs", "fs/promises", "child_process", "process", "os", "net", "http", "https", "http2", "module"].flatMap(
    (moduleName) => [moduleName, `node:${moduleName}`],
  ),
);
/** Methods whose result depends on the process's locale unless given one (argument index). */
const LOCALE_METHODS: Record<string, number> = {
  toLocaleString: 0,
  toLocaleDateString: 0,
  toLocaleTimeString: 0,
  toLocaleUpperCase: 0,
  toLocaleLowerCase: 0,
  localeCompare: 1,
};
/** Calls index.ts may make at load: they read their argument and change nothing. */
const PURE_CALLS = new Set(["Object.keys", "Object.values", "Object.entries", "Object.fromEntries"]);

interface Finding {
  line: number;
  column: number;
  message: string;
  fix: string;
}
/** What one source file breaks, and the environment variables it reads (by literal name). */
interface SourceFacts {
  findings: Finding[];
  env: Record<string, { line: number; column: number }>;
}

/** Where each environment variable is first read (the file as shown). */
export type EnvReads = Record<string, { file: string; line: number; column: number }>;

/** What a task's sources read: each variable's first place, and per source (relative to the task
 *  folder, `/`-separated) the variables it reads. */
export interface TaskReads {
  env: EnvReads;
  byFile: Record<string, string[]>;
}

/**
 * Checks every source of a task's folder (`folder`, absolute; files named relative to `shownFrom`) and
 * returns the environment variables they read. A link in the folder is refused: what it points to is
 * outside what the folder's keys cover.
 */
export function checkTaskSources(folder: string, shownFrom: string): TaskReads {
  const problems: Diagnostic[] = [];
  const env: EnvReads = {};
  const byFile: Record<string, string[]> = {};
  for (const file of sourcesOf(folder, shownFrom, problems)) {
    const shown = relative(shownFrom, file).split("\\").join("/");
    const isIndex = relative(folder, file) === "index.ts";
    const kind = isIndex ? "task-rules-index" : "task-rules";
    const facts = factsOf<Json>(
      file,
      kind,
      (bytes) =>
        checkedAtBuild(kind, bytes) ?? (analyse(bytes.toString("utf8"), file, isIndex) as unknown as Json),
    ) as unknown as SourceFacts;
    for (const finding of facts.findings) problems.push({ file: shown, ...finding });
    for (const [name, at] of Object.entries(facts.env)) env[name] ??= { file: shown, ...at };
    const names = Object.keys(facts.env);
    if (names.length) byFile[relative(folder, file).split("\\").join("/")] = names.sort();
  }
  if (problems.length) throw new DiagnosticError(problems);
  return { env, byFile };
}

/** Every .ts source of the folder (not .d.ts); a link anywhere in it is a problem. */
function sourcesOf(folder: string, shownFrom: string, problems: Diagnostic[]): string[] {
  consult(folder);
  const out: string[] = [];
  for (const e of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const abs = join(e.parentPath, e.name);
    if (e.isDirectory()) consult(abs);
    if (e.isSymbolicLink() || lstatSync(abs).isSymbolicLink()) {
      const shown = relative(shownFrom, abs);
      problems.push({
        file: shown,
        message:
          "a link in the task's folder: the code and data a stage observes must be the folder's own, " +
          "or an edit of the link's target would rerun nothing",
        fix:
          "replace the link by a copy of what it points to " +
          `(cp --remove-destination "$(readlink -f ${shown})" ${shown})`,
      });
    } else if (e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(abs);
  }
  return out.sort();
}

/** What one source breaks and reads (scripts/record-task-rules.mjs runs it over the built-in tasks). */
export function analyse(text: string, file: string, isIndex: boolean): SourceFacts {
  consult(require.resolve("typescript")); // the parser reads the rules' input: a new one may read otherwise
  const ts = require("typescript") as typeof TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const facts: SourceFacts = { findings: [], env: {} };
  const at = (node: TS.Node) => {
    const place = source.getLineAndCharacterOfPosition(node.getStart(source));
    return { line: place.line + 1, column: place.character + 1 };
  };
  const report = (node: TS.Node, message: string, fix: string) =>
    facts.findings.push({ ...at(node), message, fix });
  const visit = (node: TS.Node): void => {
    checkNode(ts, node, report, (name, where) => (facts.env[name] ??= at(where)));
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (isIndex) for (const statement of source.statements) checkWiring(ts, statement, report);
  checkLoadTimeWrites(ts, source, report);
  return facts;
}

type Report = (node: TS.Node, message: string, fix: string) => void;

const literalText = (ts: typeof TS, node: TS.Node | undefined): string | undefined =>
  node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;

/** `process` itself, or `globalThis.process` / `global.process`. */
function isProcess(ts: typeof TS, node: TS.Node): boolean {
  if (ts.isIdentifier(node)) return node.text === "process";
  return (
    ts.isPropertyAccessExpression(node) &&
    node.name.text === "process" &&
    ts.isIdentifier(node.expression) &&
    ["globalThis", "global"].includes(node.expression.text)
  );
}

function checkNode(
  ts: typeof TS,
  node: TS.Node,
  report: Report,
  readsEnv: (name: string, at: TS.Node) => void,
): void {
  if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
    checkModuleName(literalText(ts, node.moduleSpecifier), node, report);
  } else if (ts.isExportDeclaration(node) && !node.isTypeOnly) {
    checkModuleName(literalText(ts, node.moduleSpecifier), node, report);
  } else if (ts.isExternalModuleReference(node)) {
    checkModuleName(literalText(ts, node.expression), node, report);
  } else if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const isRequire = ts.isIdentifier(callee) && callee.text === "require";
    if (isRequire || callee.kind === ts.SyntaxKind.ImportKeyword) {
      const name = node.arguments.length === 1 ? literalText(ts, node.arguments[0]) : undefined;
      if (name === undefined)
        report(
          node,
          "a computed module name: the module it loads cannot be known before it runs, so it is in no key",
          'load each module by its literal name (`import { x } from "./x.js"`, or a table ' +
            '`{ a: require("./a.js"), b: require("./b.js") }`)',
        );
      else checkModuleName(name, node, report);
    } else checkLocale(ts, node, report);
  } else if (ts.isNewExpression(node)) {
    checkLocale(ts, node, report);
  } else if (ts.isIdentifier(node) && node.text === "require" && !isCalled(ts, node)) {
    report(
      node,
      "`require` used other than called with a literal name (require.resolve, a stored require): what it " +
        "loads is in no key",
      'call require("./x.js") with the literal name, or import the module',
    );
  } else if (isProcess(ts, node) && !(ts.isIdentifier(node) && isPropertyName(ts, node))) {
    checkProcessUse(ts, node, report, readsEnv);
  }
}

const isCalled = (ts: typeof TS, node: TS.Node): boolean =>
  ts.isCallExpression(node.parent) && node.parent.expression === node;

/** An identifier that names a property (`x.process`, `{ process: 1 }`), not the global. */
function isPropertyName(ts: typeof TS, node: TS.Identifier): boolean {
  const parent = node.parent;
  return (
    (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
    (ts.isPropertyAssignment(parent) && parent.name === node) ||
    (ts.isQualifiedName(parent) && parent.right === node) ||
    ts.isPropertySignature(parent) ||
    ts.isMethodDeclaration(parent)
  );
}

/** A locale-dependent call must name its locale: the process's default one is in no key. */
function checkLocale(ts: typeof TS, node: TS.CallExpression | TS.NewExpression, report: Report): void {
  const callee = node.expression;
  const args = node.arguments ?? ts.factory.createNodeArray();
  let index: number | undefined;
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(callee))
    // Own names only: a plain object's lookup would find Object.prototype's toString and valueOf.
    index = Object.hasOwn(LOCALE_METHODS, callee.name.text) ? LOCALE_METHODS[callee.name.text] : undefined;
  else if (ts.isNewExpression(node) && /^Intl\.\w+$/.test(callee.getText())) index = 0;
  if (index === undefined || literalText(ts, args[index]) !== undefined) return;
  report(
    node,
    "depends on the machine's locale unless it names one, and the machine's locale is in no key",
    'pass the locale as a literal (e.g. x.toLocaleString("en-US"), a.localeCompare(b, "en"))',
  );
}

function checkModuleName(name: string | undefined, node: TS.Node, report: Report): void {
  if (name !== undefined && FORBIDDEN_MODULES.has(name))
    report(
      node,
      `imports ${name}: task code reads no file, process, host or network itself (what it reads that way ` +
        "is in no stage's key)",
      "take data as a stage input declared in the spec (`{ file: … }`, keyed by content), or put it in a " +
        "module of the task folder (`export const TABLE = …`) and import that",
    );
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The task's `environment` (the variables its code reads), checked: a list of variable names, and every
 * variable its sources read among them. `indexFile`: the wiring module, as shown.
 */
export function declaredEnvironment(declared: unknown, reads: EnvReads, indexFile: string): string[] {
  const ok =
    declared === undefined ||
    (Array.isArray(declared) && declared.every((name) => typeof name === "string" && NAME_RE.test(name)));
  if (!ok)
    throw new DiagnosticError([
      {
        file: indexFile,
        message: `the task's \`environment\` is ${JSON.stringify(declared)}, not a list of variable names`,
        fix: 'write the names of the variables its code reads: environment: ["STRICT", "DEBUG"]',
      },
    ]);
  const names = new Set((declared as string[] | undefined) ?? []);
  const undeclared = Object.entries(reads).filter(([name]) => !names.has(name));
  if (undeclared.length)
    throw new DiagnosticError(
      undeclared.map(([name, at]) => ({
        ...at,
        message:
          `reads the environment variable ${name}, which the task does not declare: ` +
          "its value would be in no key",
        fix:
          `declare it in the task object (index.ts): environment: [${JSON.stringify(name)}]; ` +
          "a stage whose code reads it is then keyed on its value",
      })),
    );
  return [...names].sort();
}

/** `process.env.NAME` and `process.env["NAME"]` read a declared variable; any other use of `process` is
 *  refused (the environment as a whole, the arguments, the working folder: none is keyed). */
function checkProcessUse(
  ts: typeof TS,
  node: TS.Node,
  report: Report,
  readsEnv: (name: string, at: TS.Node) => void,
): void {
  const parent = node.parent;
  if (isProcess(ts, parent)) return; // `globalThis.process`: judged at the outer node
  const envAccess =
    ts.isPropertyAccessExpression(parent) && parent.expression === node && parent.name.text === "env";
  const name = envAccess ? variableName(ts, parent) : undefined;
  if (name !== undefined && !isWritten(ts, parent.parent)) return readsEnv(name, parent.parent);
  report(
    node,
    envAccess
      ? name !== undefined
        ? `sets the environment variable ${name}: other modules' results would then depend on load order`
        : "reads the environment other than one variable by its literal name"
      : "uses `process`: task code's results may depend only on its inputs and declared variables",
    envAccess && name === undefined
      ? 'read each variable by name (process.env.NAME) and declare it in the task (`environment: ["NAME"]`)'
      : "remove it; a setting the task needs is a parameter of the spec, or a declared variable read " +
          'with process.env.NAME (`environment: ["NAME"]`)',
  );
}

/** The NAME of `process.env.NAME` / `process.env["NAME"]`, given the `process.env` node. */
function variableName(ts: typeof TS, envNode: TS.Node): string | undefined {
  const parent = envNode.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.expression === envNode) return parent.name.text;
  if (ts.isElementAccessExpression(parent) && parent.expression === envNode)
    return literalText(ts, parent.argumentExpression);
  return undefined;
}

/** The target of an assignment, `delete` or `++`/`--`. */
function isWritten(ts: typeof TS, node: TS.Node): boolean {
  const parent = node.parent;
  if (ts.isBinaryExpression(parent) && parent.left === node)
    return isAssignment(ts, parent.operatorToken.kind);
  return (
    ts.isDeleteExpression(parent) ||
    ((ts.isPrefixUnaryExpression(parent) || ts.isPostfixUnaryExpression(parent)) &&
      [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(parent.operator))
  );
}

const isAssignment = (ts: typeof TS, kind: TS.SyntaxKind): boolean =>
  kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;

const WIRING_FIX =
  "move the code into a module of the task folder and import its result; index.ts holds imports, types " +
  "and `export const task = { … }` (docs/tasks.md, Parts)";

/** index.ts is in no key: at load it may only import, declare and build the task object from imports. */
function checkWiring(ts: typeof TS, statement: TS.Statement, report: Report): void {
  if (
    ts.isImportDeclaration(statement) ||
    ts.isExportDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) ||
    ts.isInterfaceDeclaration(statement) ||
    ts.isFunctionDeclaration(statement)
  )
    return;
  if (ts.isVariableStatement(statement) && statement.declarationList.flags & ts.NodeFlags.Const) {
    for (const declaration of statement.declarationList.declarations)
      if (declaration.initializer) checkLoadTime(ts, declaration.initializer, report);
    return;
  }
  report(
    statement,
    "index.ts runs this at load, and index.ts is in no stage's key: what it changes would go unseen",
    WIRING_FIX,
  );
}

/** An expression index.ts evaluates at load: no call (but PURE_CALLS), no `new`, no write. */
function checkLoadTime(ts: typeof TS, node: TS.Node, report: Report): void {
  if (ts.isFunctionLike(node)) return; // its body runs when called, in a part's module's place
  if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isTaggedTemplateExpression(node)) {
    const callee = ts.isTaggedTemplateExpression(node) ? node.tag : node.expression;
    if (!(ts.isCallExpression(node) && PURE_CALLS.has(callee.getText())))
      report(node, "index.ts calls this at load, and index.ts is in no stage's key", WIRING_FIX);
  } else if (
    ts.isDeleteExpression(node) ||
    (ts.isBinaryExpression(node) && isAssignment(ts, node.operatorToken.kind))
  ) {
    report(node, "index.ts changes a value at load, and index.ts is in no stage's key", WIRING_FIX);
  }
  ts.forEachChild(node, (child) => checkLoadTime(ts, child, report));
}

/** In any module, code run at load must not change what it imports (another module's state): a stage
 *  calling that other module would not have this one in its key. */
function checkLoadTimeWrites(ts: typeof TS, source: TS.SourceFile, report: Report): void {
  const imported = new Set<string>();
  for (const statement of source.statements)
    if (ts.isImportDeclaration(statement) && statement.importClause && !statement.importClause.isTypeOnly) {
      if (statement.importClause.name) imported.add(statement.importClause.name.text);
      const bindings = statement.importClause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) imported.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings))
        for (const e of bindings.elements) imported.add(e.name.text);
    }
  const visit = (node: TS.Node): void => {
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    const target =
      ts.isDeleteExpression(node) && node
        ? node.expression
        : ts.isBinaryExpression(node) && isAssignment(ts, node.operatorToken.kind)
          ? node.left
          : undefined;
    if (target && imported.has(rootName(ts, target) ?? ""))
      report(
        node,
        "changes a value this module imports, at load: a stage that calls the other module would not " +
          "have this one in its key",
        "compute a new value here instead of changing the imported one (or change it where it is defined)",
      );
    ts.forEachChild(node, visit);
  };
  visit(source);
}

/** `a` of `a.b.c` / `a[b]`. */
function rootName(ts: typeof TS, node: TS.Node): string | undefined {
  let root = node;
  while (ts.isPropertyAccessExpression(root) || ts.isElementAccessExpression(root)) root = root.expression;
  return ts.isIdentifier(root) && root !== node ? root.text : undefined;
}
