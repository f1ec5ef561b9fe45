// The built-in tasks' sources, checked by the rules of task-rules.ts when medbench was built
// (scripts/record-task-rules.mjs writes dist/task-rules.json), so that a first build of a built-in task
// does not load the TypeScript compiler (about a quarter of a second and 40 MB): a source whose role and
// sha256 the table holds has the facts the same rules, with the same parser, gave it then.
import { existsSync, readFileSync } from "../../util/builtins.js";
import { join } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { consult } from "../../util/consulted.js";
import { installRoot } from "../../util/paths.js";
import type { Json } from "../../util/json.js";

export const RULES_TABLE = "dist/task-rules.json";

interface Table {
  /** The TypeScript whose parser read the sources: another one may read them otherwise. */
  typescript: string;
  /** `<kind> <sha256 of the source>` -> the facts of task-rules.ts's analyse(). */
  facts: Record<string, Json>;
}

let table: Table | null | undefined;

/** The parser's version, as installed now. */
function typescriptVersion(): string | null {
  try {
    const manifest = require.resolve("typescript/package.json");
    consult(manifest);
    return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

function load(): Table | null {
  const file = join(installRoot(), RULES_TABLE);
  consult(file);
  if (!existsSync(file)) return null;
  try {
    const read = JSON.parse(readFileSync(file, "utf8")) as Table;
    return read.typescript === typescriptVersion() ? read : null;
  } catch {
    return null; // damaged: the sources are checked as any other task's
  }
}

/** The facts `kind` of a source with these bytes was given when medbench was built, if it was. */
export function checkedAtBuild(kind: string, bytes: Buffer): Json | undefined {
  if (table === undefined) table = load();
  return table?.facts[`${kind} ${sha256Hex(bytes)}`];
}
