// What task code may do (src/runner/code/task-rules.ts), source by source, on small task folders written
// here: what is refused is said at file:line:column; what a task needs (wiring, literal imports, declared
// reads, load-time values of its own) passes. The CLI side, with builds: tests/runner/edit-matrix.test.ts.
import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkTaskSources, declaredEnvironment } from "../../src/runner/code/task-rules.js";
import { DiagnosticError } from "../../src/errors.js";

const root = mkdtempSync(join(tmpdir(), "medbench-rules-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A task folder of these sources; what the check says of it (each problem as file:line:column message). */
function check(sources: Record<string, string>): string[] {
  const folder = join(root, `t${n++}`);
  mkdirSync(folder);
  for (const [name, text] of Object.entries(sources)) writeFileSync(join(folder, name), text);
  try {
    checkTaskSources(folder, folder);
    return [];
  } catch (e) {
    if (!(e instanceof DiagnosticError)) throw e;
    return e.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`);
  }
}

const WIRING = [
  'import type { TaskModule } from "../task.js";',
  'import { parse } from "./parser.js";',
  'import { SUBSETS } from "./release.js";',
  "const NAMES = { a: 1 };",
  "export const task: TaskModule = {",
  "  contract: 2,",
  "  parseReply: parse,",
  "  subsets: Object.keys(SUBSETS),",
  "  params: { score: NAMES },",
  "  baselines: { x: { reply: ({ requests }) => requests.map(() => String(Date.now())) } },",
  "} as never;",
  "",
].join("\n");

describe("task rules", () => {
  it("lets index.ts wire: imports, types, constants, Object.keys, functions it does not call", () => {
    expect(check({ "index.ts": WIRING })).toEqual([]);
  });

  it("refuses in index.ts what runs at load: a statement, a call, a write", () => {
    const said = check({
      "index.ts":
        WIRING + "delete (SUBSETS as never as { a?: 1 }).a;\n" + "export const made = makeTable();\n",
    });
    expect(said).toEqual([
      "index.ts:12:1 index.ts runs this at load, and index.ts is in no stage's key: " +
        "what it changes would go unseen",
      "index.ts:13:21 index.ts calls this at load, and index.ts is in no stage's key",
    ]);
  });

  it("refuses a module that changes what it imports at load, not one that builds its own values", () => {
    const own = [
      'import { T } from "./t.js";',
      "const mine = { ...T };",
      "mine.x = 1;",
      "export const v = [1].map((x) => x);",
      "",
    ].join("\n");
    expect(check({ "a.ts": own })).toEqual([]);
    const said = check({ "a.ts": 'import { T } from "./t.js";\nT.x = 2;\ndelete T.y;\n' });
    expect(said.map((s) => s.split(" ")[0])).toEqual(["a.ts:2:1", "a.ts:3:1"]);
    expect(said[0]).toContain("changes a value this module imports, at load");
  });

  it("refuses computed loads, file and process modules, and uses of process but a variable by name", () => {
    const said = check({
      "a.ts": [
        'import { readFileSync } from "node:fs";',
        'import * as cp from "child_process";',
        'export { hostname } from "os";',
        "const name = './b.js';",
        "export const b = require(name);",
        "export const c = () => import(name);",
        "export const r = require.resolve('./b.js');",
        "export const all = process.env;",
        'export const d = process.env["DEBUG"];',
        "export const e = process.env.STRICT;",
        "export const cwd = process.cwd();",
        "export const g = globalThis.process.argv;",
        "process.env.TZ = 'UTC';",
        "export const f = (x: { process: number }) => x.process;",
        "",
      ].join("\n"),
    });
    expect(said.map((s) => s.split(" ")[0])).toEqual([
      "a.ts:1:1",
      "a.ts:2:1",
      "a.ts:3:1",
      "a.ts:5:18",
      "a.ts:6:24",
      "a.ts:7:18",
      "a.ts:8:20",
      "a.ts:11:20",
      "a.ts:12:18",
      "a.ts:13:1",
    ]);
    expect(said[3]).toContain("a computed module name");
    expect(said[5]).toContain("`require` used other than called with a literal name");
    expect(said[6]).toContain("reads the environment other than one variable by its literal name");
    expect(said[7]).toContain("uses `process`");
    expect(said[9]).toContain("sets the environment variable TZ");
  });

  it("refuses a locale-dependent call that names no locale", () => {
    const said = check({
      "a.ts": [
        "export const a = (1).toLocaleString();",
        'export const b = (1).toLocaleString("en-US");',
        "export const c = (s: string, t: string) => s.localeCompare(t);",
        'export const d = (s: string, t: string) => s.localeCompare(t, "en");',
        "export const e = new Intl.Collator();",
        "",
      ].join("\n"),
    });
    expect(said.map((s) => s.split(" ")[0])).toEqual(["a.ts:1:18", "a.ts:3:44", "a.ts:5:18"]);
  });

  it("says which variables each source reads, and refuses one the task does not declare", () => {
    const folder = join(root, "env");
    mkdirSync(folder);
    writeFileSync(
      join(folder, "a.ts"),
      'export const x = process.env.STRICT;\nexport const y = process.env["DEBUG"];\n',
    );
    const reads = checkTaskSources(folder, root);
    expect(reads.byFile).toEqual({ "a.ts": ["DEBUG", "STRICT"] });
    expect(declaredEnvironment(["STRICT", "DEBUG"], reads.env, "env/index.ts")).toEqual(["DEBUG", "STRICT"]);
    expect(() => declaredEnvironment(["STRICT"], reads.env, "env/index.ts")).toThrow(
      /reads the environment variable DEBUG, which the task does not declare/,
    );
    expect(() => declaredEnvironment("STRICT", reads.env, "env/index.ts")).toThrow(
      /not a list of variable names/,
    );
  });
});
