// Relative requires between medbench's compiled modules, resolved by their path. Node's resolver runs its
// whole search for each one: the package scope read up the folder tree for a self-reference, and the file's
// real path walked a component at a time, for each of the hundreds of requires a build's process makes
// (docs/performance.md, "Compiled modules resolved by their path").
import { statSync } from "../util/builtins.js";
import { dirname, resolve, sep } from "node:path";

type Parent = { filename?: string | null } | null | undefined;
type Resolver = (request: string, parent: Parent, isMain: boolean, options?: unknown) => string;
type Loader = { _resolveFilename: Resolver };

/** A require of `./x.js` or `../x.js` by a module under `root`, the compiled tree (a real path, as Node
 *  gives a module's filename), naming a file under it: that file's path. Anything else is for Node. */
export function compiledFile(root: string, request: string, parent: Parent): string | null {
  const from = parent?.filename;
  if (!from?.startsWith(root) || !request.endsWith(".js")) return null;
  if (!request.startsWith("./") && !request.startsWith("../")) return null;
  const file = resolve(dirname(from), request);
  // Not a file (a missing module, a folder, one it may not read): Node's resolver gives its own answer or
  // error.
  return file.startsWith(root) && isFile(file) ? file : null;
}

function isFile(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** From here on, the compiled modules under `root` find each other by path; every other request (a
 *  package, a built-in, a module outside `root`, a require with options) goes to Node's resolver. */
export function resolveCompiledByPath(root: string): void {
  const inside = root.endsWith(sep) ? root : root + sep;
  const loader = require("node:module") as Loader;
  const nodeResolve = loader._resolveFilename;
  loader._resolveFilename = function (this: unknown, request, parent, isMain, options) {
    const file = options === undefined ? compiledFile(inside, request, parent) : null;
    return file ?? nodeResolve.call(this, request, parent, isMain, options);
  };
}
