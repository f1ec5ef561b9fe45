// The edit matrix: each edit of the task code (a built-in task, edited in a copy of medbench and compiled
// again, and a task of the user's repository made by `new-task`) either is refused before anything runs
// (exit 2, the place, nothing written) or is built incrementally to exactly what a clean build (cache,
// results and lock removed) makes: medbench.lock, which holds every stage's key and outputs, compared byte
// for byte. Each subject reuses one project; the edits run in order, each on the state the one before left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { BIN, Install, Project, expectCleanFailure, type Run } from "../support/rig.js";
import { REPO } from "../support/helpers.js";

interface Subject {
  title: string;
  spec: string;
  folder: string; // the task folder, in the install or the project
  parser: string; // the parse part's source, in the folder
  /** An edit of the parser's code that makes every parse fail when STRICT is true. */
  strict: [string, string];
  /** An edit of a comment of the parser (emitted code changes, behaviour does not). */
  comment: [string, string];
  /** An edit that changes what the parser returns. */
  behaviour: [string, string];
  scorer: string; // the score part's source, in the folder
  /** Where an expression's value goes into the parse (its `error`) and into the score's tables. */
  parseProbe: (expr: string) => [string, string];
  scoreProbe: (expr: string) => [string, string];
  /** The parser returning undefined; every item id the number 7; a cluster that is an object with NaN. */
  noParse: [string, string];
  sevens: [string, string];
  nanCluster: [string, string];
}

const VOICE: Subject = {
  title: "a built-in task (voice-command)",
  spec: "specs/voice-command.yaml",
  folder: "tasks/voice-command",
  parser: "parser.ts",
  strict: [
    "parseReply(reply.text, request);",
    'STRICT ? { ok: false, value: null, error: "strict" } : parseReply(reply.text, request);',
  ],
  comment: ["  return stripped.replace(/```", "  // code fences go too\n  return stripped.replace(/```"],
  behaviour: ["return { ok: true, value };", "return { ok: false, value };"],
  scorer: "scorer.ts",
  parseProbe: (expr) => [
    "return { ok: true, value };",
    `return { ok: true, value, error: String(${expr}) };`,
  ],
  scoreProbe: (expr) => [
    "tables: tables(items) };",
    `tables: { ...tables(items), probe: String(${expr}) } };`,
  ],
  noParse: ["return { ok: true, value };", "return undefined as never;"],
  sevens: [
    "return { items, metrics:",
    "return { items: items.map((x) => ({ ...x, id: 7 as never })), metrics:",
  ],
  nanCluster: ["cluster: String(item.meta.group),", "cluster: { group: NaN } as never,"],
};

const USER: Subject = {
  title: "a task of the user's repository (new-task)",
  spec: "specs/t1.yaml",
  folder: "tasks/t1",
  parser: "parser.ts",
  strict: ["const m = /-?", "const m = STRICT ? null : /-?"],
  comment: ["  return m ?", "  // the first match, if any\n  return m ?"],
  behaviour: ["value: m[0]", 'value: m[0] + "0"'],
  scorer: "scorer.ts",
  parseProbe: (expr) => ["value: m[0] }", `value: m[0], error: String(${expr}) }`],
  scoreProbe: (expr) => [
    "tables: { items: items.length }",
    `tables: { items: items.length, probe: String(${expr}) }`,
  ],
  noParse: ["  return m ?", "  return undefined as never;\n  return m ?"],
  sevens: ["return { id: r.id, meta", "return { id: 7 as never, meta"],
  nanCluster: ["cluster: it.id,", "cluster: { group: NaN } as never,"],
};

/** What a subject runs on: a project, and the install whose code (or the project's task) is edited. */
interface Rig {
  project: Project;
  bin: string;
  /** Installs a package `name` with these files where the task's code finds it (and, in an install,
   *  where its package-lock.json pins it). */
  addPackage(name: string, files: Record<string, string>): Promise<void>;
  /** The task folder's file `rel`, as a path. */
  file(rel: string): string;
  edit(rel: string, from: string, to: string): Promise<void>;
  write(rel: string, text: string): Promise<void>;
  done(): void;
}

async function rigFor(s: Subject): Promise<Rig> {
  if (s === VOICE) {
    const install = new Install();
    const project = new Project();
    const compile = () => install.compile();
    return {
      project,
      bin: install.bin,
      addPackage: async (name, files) => {
        installPackage(install.dir, name, files);
        pinPackage(install.path("package-lock.json"), name);
        await compile();
      },
      file: (rel) => install.path(s.folder, rel),
      edit: async (rel, from, to) => {
        install.edit(join(s.folder, rel), (t) => t.replace(from, to));
        await compile();
      },
      write: async (rel, text) => {
        writeFileSync(install.path(s.folder, rel), text);
        await compile();
      },
      done: () => {
        install.remove();
        project.remove();
      },
    };
  }
  const project = new Project(false);
  for (const args of [["init"], ["new-task", "t1"]]) expect((await project.run(args)).exitCode).toBe(0);
  return {
    project,
    bin: BIN,
    addPackage: async (name, files) => installPackage(project.dir, name, files),
    file: (rel) => project.path(s.folder, rel),
    edit: async (rel, from, to) => project.edit(join(s.folder, rel), (t) => replaced(t, from, to)),
    write: async (rel, text) => project.write(join(s.folder, rel), text),
    done: () => project.remove(),
  };
}

/** A package under `root`/node_modules; a node_modules that is a link (an install sharing the repository's)
 *  becomes a folder of links to the repository's packages first. */
function installPackage(root: string, name: string, files: Record<string, string>): void {
  const modules = join(root, "node_modules");
  if (lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) {
    rmSync(modules);
    mkdirSync(modules);
    for (const entry of readdirSync(join(REPO, "node_modules")))
      symlinkSync(join(REPO, "node_modules", entry), join(modules, entry));
  }
  const dir = join(modules, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", main: "index.js" }));
  for (const [rel, text] of Object.entries(files)) writeFileSync(join(dir, rel), text);
}

/** The install's package-lock.json pins the package (as `npm install` would). */
function pinPackage(lockFile: string, name: string): void {
  const lock = JSON.parse(readFileSync(lockFile, "utf8")) as { packages: Record<string, object> };
  lock.packages[`node_modules/${name}`] = { version: "1.0.0" };
  writeFileSync(lockFile, JSON.stringify(lock, null, 2));
}

function replaced(text: string, from: string, to: string): string {
  const out = text.replace(from, to);
  expect(out, `the edit ${from} applies`).not.toBe(text);
  return out;
}

for (const s of [VOICE, USER])
  describe(`edit matrix: ${s.title}`, () => {
    let rig: Rig;
    const run = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
      rig.project.run(args, env, rig.bin);
    const statuses = async (env: Record<string, string> = {}) => {
      const r = await run(["build", s.spec, "--json"], env);
      expect(r.exitCode, r.stderr).toBe(0);
      const summary = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
        stages: { name: string; status: string }[];
      };
      return Object.fromEntries(summary.stages.map((x) => [x.name, x.status]));
    };
    /** The incremental build's lock, then a clean build's: they must be the same. */
    const sameAsClean = async (env: Record<string, string> = {}) => {
      const incremental = rig.project.read("medbench.lock");
      for (const p of ["cache", "results", "medbench.lock"])
        rmSync(rig.project.path(p), { recursive: true });
      await statuses(env);
      expect(rig.project.read("medbench.lock")).toBe(incremental);
    };
    /** Refused before anything ran: exit 2, the place, cache, lock and results untouched. */
    // What results are made of. Derived caches may change: the code memo learns a source's facts, and a
    // user's task is compiled before its module can say which variables it declares.
    const kept = ["cache/stages", "cache/objects", "medbench.lock", "results"];
    const refused = async (place: RegExp) => {
      const before = rig.project.snapshot(kept);
      const r = await run(["build", s.spec]);
      expect(r.exitCode, r.stderr).toBe(2);
      expectCleanFailure(r.stderr);
      expect(r.stderr).toMatch(place);
      expect(rig.project.snapshot(kept)).toBe(before);
      return r.stderr;
    };
    const undo = async (rel: string, from: string, to: string) => rig.edit(rel, to, from);

    beforeAll(async () => {
      rig = await rigFor(s);
      await statuses();
    });
    afterAll(() => rig.done());

    it("index.ts changing shared state at load is refused where it is written", async () => {
      const tail = "\ndelete (task as { compare?: unknown }).compare;\n";
      const index = `${s.folder}/index.ts`;
      await rig.write(
        "index.ts",
        rig.project.read === undefined ? "" : readText(rig.file("index.ts")) + tail,
      );
      const err = await refused(new RegExp(`${index}:\\d+:1: index.ts runs this at load`));
      expect(err).toContain("fix:");
      await rig.write("index.ts", readText(rig.file("index.ts")).replace(tail, ""));
    });

    it("an undeclared variable, file read, computed require or link: each refused in place", async () => {
      const parser = `${s.folder}/${s.parser}`;
      const head = readText(rig.file(s.parser));
      const cases: [string, RegExp][] = [
        [
          'const STRICT = process.env.MEDBENCH_STRICT === "1";\n',
          /reads the environment variable MEDBENCH_STRICT/,
        ],
        ['import { readFileSync } from "node:fs";\n', /imports node:fs/],
        [
          'const helper = "./prompts" + ".js";\nexport const loaded = require(helper);\n',
          /a computed module name/,
        ],
        ["export const when = (1).toLocaleString();\n", /depends on the machine's locale/],
      ];
      for (const [prefix, said] of cases) {
        await rig.write(s.parser, prefix + head);
        const err = await refused(new RegExp(`${parser}:\\d+:\\d+: `));
        expect(err).toMatch(said);
      }
      await rig.write(s.parser, head);
      symlinkSync(join(REPO, "README.md"), rig.file("notes.md"));
      expect(await refused(/notes\.md: a link in the task's folder/)).toContain("cp --remove-destination");
      rmSync(rig.file("notes.md"));
    });

    it("a declared variable is keyed by value: status names it; the build equals a clean one", async () => {
      await rig.edit("index.ts", "contract: 2,", 'contract: 2,\n  environment: ["MEDBENCH_STRICT"],');
      const head = readText(rig.file(s.parser));
      await rig.write(s.parser, 'const STRICT = process.env.MEDBENCH_STRICT === "1";\n' + head);
      await rig.edit(s.parser, ...s.strict);
      expect((await statuses()).parse).toBe("ran"); // its code changed
      await sameAsClean();
      const strict = { MEDBENCH_STRICT: "1" };
      const status = await run(["status", s.spec], strict);
      expect(status.stdout).toMatch(
        /stale\s+parse[^\n]*\n\s+environment variable changed: MEDBENCH_STRICT\n/,
      );
      expect(await statuses(strict)).toMatchObject({ prompts: "fresh", model: "fresh", parse: "ran" });
      await sameAsClean(strict);
      await statuses();
    });

    it("a new file is in no key; a comment edit stops at parse; an edit reruns what it hits", async () => {
      await rig.write("README.md", "notes on the task\n");
      expect(Object.values(await statuses()).every((x) => x === "fresh")).toBe(true);
      await sameAsClean();
      await rig.edit(s.parser, ...s.comment);
      expect(await statuses()).toMatchObject({ model: "fresh", parse: "ran", score: "fresh" });
      await sameAsClean();
      await rig.edit(s.parser, ...s.behaviour);
      expect(await statuses()).toMatchObject({ model: "fresh", parse: "ran", score: "ran" });
      await sameAsClean();
      await undo(s.parser, ...s.behaviour);
    });
  });

/** One edit of the task's code past what the source rules see: where it goes, what it reads, and what a
 *  build must then do (`built`: build, equal to a clean build; a pattern: fail, saying it, with a fix). */
interface StageEntry {
  key: string;
  outputs: Record<string, string>;
}

interface Cell {
  name: string;
  part: "parser" | "scorer";
  /** Lines put at the top of the part's source (imports, helpers). */
  head?: string;
  expr: string;
  /** A package the edit imports: its files. */
  pkg?: Record<string, string>;
  /** Set for a second build, which must find every stage fresh and equal a clean build with it set. */
  env?: Record<string, string>;
  outcome: "built" | RegExp;
}

const PROBE_ENV = { MEDBENCH_PROBE: "set" };
const LEXPKG = "lexpkg";
const CELLS: Cell[] = [
  // An undeclared variable, read past the rules: absent in the stage's process, so setting it changes
  // nothing.
  ...[
    "(globalThis as any).process.env.MEDBENCH_PROBE",
    'new Function("return process.env.MEDBENCH_PROBE")()',
    'Reflect.get(Reflect.get(globalThis, "process"), "env").MEDBENCH_PROBE',
    '(0, eval)("process.env.MEDBENCH_PROBE")',
  ].map((expr): Cell => ({ name: expr, part: "parser", expr, env: PROBE_ENV, outcome: "built" })),
  // The world: a file, the network; HOME is absent.
  {
    name: 'eval("require")("fs")',
    part: "parser",
    expr: 'eval("require")("fs").readFileSync("/etc/hostname", "utf8")',
    outcome: /read \/etc\/hostname, which its key does not hold/,
  },
  {
    name: "module.constructor._load",
    part: "parser",
    expr: '(module.constructor as any)._load("fs").readFileSync("/etc/hostname", "utf8")',
    outcome: /read \/etc\/hostname, which its key does not hold/,
  },
  {
    name: "fetch",
    part: "parser",
    expr: 'fetch("http://127.0.0.1:9/")',
    outcome: /fetch\(\): stage code runs isolated/,
  },
  { name: "HOME", part: "scorer", expr: "(globalThis as any).process.env.HOME", outcome: "built" },
  // Clocks and randomness: fixed, and drawn from the stage's key.
  ...[
    "Date.now()",
    "new Date().toISOString()",
    "Math.random()",
    "performance.timeOrigin",
    'new Intl.DateTimeFormat("en-US", { timeStyle: "medium", timeZone: "UTC" }).format()',
  ].map((expr): Cell => ({ name: expr, part: "scorer", expr, outcome: "built" })),
  ...[
    'performance.mark("x").startTime',
    'require("node:crypto").generateKeySync("hmac", { length: 64 }).export().toString("hex")',
  ].map((expr): Cell => ({ name: expr, part: "scorer", expr, outcome: /stage code runs isolated/ })),
  // A package: its own data file read with fs, a computed require, a variable, a clock.
  {
    name: "a package reading its own data file",
    part: "parser",
    head: `import { words } from "${LEXPKG}";\n`,
    expr: "words()",
    pkg: {
      "index.js":
        'const fs = require("fs");\nconst path = require("path");\n' +
        'exports.words = () => fs.readFileSync(path.join(__dirname, "words.json"), "utf8").trim();\n',
      "words.json": '["a","b"]\n',
    },
    outcome: "built",
  },
  {
    name: "a package's computed require",
    part: "parser",
    head: `import { words } from "${LEXPKG}";\n`,
    expr: "words()",
    pkg: {
      "index.js": 'exports.words = () => require("./" + ["data", "js"].join(".")).words;\n',
      "data.js": 'exports.words = "a b";\n',
    },
    outcome: "built",
  },
  {
    name: "a package reading a file outside its folder",
    part: "parser",
    head: `import { words } from "${LEXPKG}";\n`,
    expr: "words()",
    pkg: { "index.js": 'exports.words = () => require("fs").readFileSync("/etc/hostname", "utf8");\n' },
    outcome: /read \/etc\/hostname, which its key does not hold/,
  },
  {
    name: "a package reading a variable",
    part: "parser",
    head: `import { words } from "${LEXPKG}";\n`,
    expr: "words()",
    pkg: { "index.js": "exports.words = () => String(process.env.MEDBENCH_PROBE);\n" },
    env: PROBE_ENV,
    outcome: "built",
  },
  {
    name: "a package's clock",
    part: "scorer",
    head: `import { words } from "${LEXPKG}";\n`,
    expr: "words()",
    pkg: { "index.js": "exports.words = () => `${Date.now()} ${new Date()} ${Math.random()}`;\n" },
    outcome: "built",
  },
  // What the rules refused and must not: Object.prototype's names.
  ...["(12).toString(16)", "Number(3).valueOf()", '({ a: 1 }).hasOwnProperty("a")'].map(
    (expr): Cell => ({ name: expr, part: "parser", expr, outcome: "built" }),
  ),
];

for (const s of [VOICE, USER])
  describe(`edit matrix, past the source rules: ${s.title}`, () => {
    let rig: Rig;
    const run = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
      rig.project.run(args, env, rig.bin);
    const build = async (env: Record<string, string> = {}): Promise<Record<string, string>> => {
      const r = await run(["build", s.spec, "--json"], env);
      expect(r.exitCode, r.stderr).toBe(0);
      const summary = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
        stages: { name: string; status: string }[];
      };
      return Object.fromEntries(summary.stages.map((x) => [x.name, x.status]));
    };
    const made = ["medbench.lock", "results"];
    /** Incremental, then clean twice: the lock (every key and output) and the results, byte for byte. */
    const sameAsClean = async (env: Record<string, string> = {}) => {
      const incremental = rig.project.snapshot(made);
      const clean = async () => {
        for (const p of ["cache", ...made]) rmSync(rig.project.path(p), { recursive: true, force: true });
        await build(env);
        return rig.project.snapshot(made);
      };
      expect(await clean(), "a clean build makes what the incremental one did").toBe(incremental);
      expect(await clean(), "two clean builds are the same").toBe(incremental);
    };
    const source = (part: Cell["part"]) => (part === "parser" ? s.parser : s.scorer);

    beforeAll(async () => {
      rig = await rigFor(s);
      await build();
    });
    afterAll(() => rig.done());

    it.each(CELLS)("$name", async (cell) => {
      const file = source(cell.part);
      const pristine = readText(rig.file(file));
      const [from, to] = cell.part === "parser" ? s.parseProbe(cell.expr) : s.scoreProbe(cell.expr);
      if (cell.pkg) await rig.addPackage(LEXPKG, cell.pkg);
      await rig.write(file, (cell.head ?? "") + replaced(pristine, from, to));
      try {
        if (cell.outcome === "built") {
          await build();
          expect(
            Object.values(await build()).every((x) => x === "fresh"),
            "nothing stale",
          ).toBe(true);
          await sameAsClean();
          if (cell.env) {
            expect(Object.values(await build(cell.env)).every((x) => x === "fresh")).toBe(true);
            await sameAsClean(cell.env);
          }
          const published = readdirSync(rig.project.path("results"), { recursive: true })
            .map((rel) => rig.project.path("results", String(rel)))
            .filter((path) => lstatSync(path).isFile())
            .map((path) => readFileSync(path, "utf8"))
            .join("\n");
          expect(published).not.toContain(`"${process.env.HOME}"`);
        } else {
          const before = rig.project.snapshot(made);
          const r = await run(["build", s.spec]);
          expect(r.exitCode, r.stderr).toBe(1);
          expectCleanFailure(r.stderr);
          expect(r.stderr).toMatch(cell.outcome);
          expect(r.stderr).toMatch(/\n\s+fix: /);
          expect(rig.project.snapshot(made)).toBe(before);
        }
      } finally {
        await rig.write(file, pristine);
      }
    });

    it("a package's own data file, read with fs, is keyed: an edit of it reruns parse", async () => {
      const pristine = readText(rig.file(s.parser));
      const reader =
        'const fs = require("fs");\nconst path = require("path");\n' +
        'exports.words = () => fs.readFileSync(path.join(__dirname, "words.json"), "utf8").trim();\n';
      const pkg = (words: string) => rig.addPackage(LEXPKG, { "index.js": reader, "words.json": words });
      await pkg('["a"]\n');
      const [from, to] = s.parseProbe("words()");
      await rig.write(s.parser, `import { words } from "${LEXPKG}";\n` + replaced(pristine, from, to));
      try {
        await build();
        await pkg('["b"]\n');
        expect(await build()).toMatchObject({ model: "fresh", parse: "ran" });
        await sameAsClean();
      } finally {
        await rig.write(s.parser, pristine);
      }
    });

    it("a JSON file the task imports is allowed and keyed: an edit of it reruns parse", async () => {
      const pristine = readText(rig.file(s.parser));
      await rig.write("lexicon.json", '{ "unit": "mm" }\n');
      const [from, to] = s.parseProbe("lexicon.unit");
      await rig.write(s.parser, 'import lexicon from "./lexicon.json";\n' + replaced(pristine, from, to));
      try {
        expect((await build()).parse).toBe("ran");
        await sameAsClean();
        await rig.write("lexicon.json", '{ "unit": "cm" }\n');
        expect(await build()).toMatchObject({ model: "fresh", parse: "ran" });
        await sameAsClean();
      } finally {
        rmSync(rig.file("lexicon.json"));
        rmSync(rig.file("../../dist/tasks/voice-command/lexicon.json"), { force: true });
        await rig.write(s.parser, pristine);
      }
    });

    it.each([
      [
        "parseReply returning undefined",
        "parser",
        "noParse",
        /parseReply\(\) returned undefined, not \{ ok, value \}/,
      ],
      ["item ids that are the number 7", "scorer", "sevens", /has the id 7, not a string/],
      [
        "a cluster that is an object holding NaN",
        "scorer",
        "nanCluster",
        /cluster \{"group":null\} is not a string/,
      ],
    ] as const)(
      "the contract refuses %s, naming the function and the fix",
      async (_name, part, edit, said) => {
        const file = source(part);
        const pristine = readText(rig.file(file));
        await rig.write(file, replaced(pristine, ...s[edit]));
        try {
          const before = rig.project.snapshot(made);
          const r = await run(["build", s.spec]);
          expect(r.exitCode, r.stderr).toBe(1);
          expectCleanFailure(r.stderr);
          expect(r.stderr).toMatch(said);
          expect(r.stderr).toMatch(new RegExp(`${s.folder}/${file}: \\w+\\(\\)`));
          expect(r.stderr).toContain("fix: correct the task's code");
          expect(rig.project.snapshot(made)).toBe(before);
        } finally {
          await rig.write(file, pristine);
        }
      },
    );
  });

const readText = (path: string): string => readFileSync(path, "utf8");

describe("edit matrix: packages of a user's task", () => {
  let p: Project;
  const spec = "specs/t1.yaml";
  const pkg = (name: string, version: string, body: string, deps: Record<string, string> = {}) => {
    const dir = p.path("node_modules", name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name, version, main: "index.js", dependencies: deps }),
    );
    writeFileSync(join(dir, "index.js"), body);
  };
  const statuses = async () => (await p.buildSpec(spec)).status;

  beforeAll(async () => {
    p = new Project(false);
    for (const args of [["init"], ["new-task", "t1"]]) expect((await p.run(args)).exitCode).toBe(0);
    pkg("fake-suffix", "1.0.0", 'exports.suffix = "";\n');
    pkg(
      "fake-pad",
      "2.0.0",
      'const { suffix } = require("fake-suffix");\nexports.pad = (s) => s + suffix;\n',
      {
        "fake-suffix": "1.0.0",
      },
    );
    p.edit("tasks/t1/parser.ts", (t) =>
      replaced(
        replaced(t, "export function", 'import { pad } from "fake-pad";\n\nexport function'),
        "value: m[0]",
        "value: pad(m[0])",
      ),
    );
    await statuses();
  });
  afterAll(() => p.remove());

  it("a package (or its dependency) patched in place reruns what loads it; status names it", async () => {
    pkg("fake-suffix", "1.0.0", 'exports.suffix = "!";\n'); // the same version, other code
    const status = await p.run(["status", spec]);
    expect(status.stdout).toMatch(/stale\s+parse[^\n]*\n\s+package changed: fake-suffix 1\.0\.0 sha256:/);
    expect(await statuses()).toMatchObject({ model: "fresh", parse: "ran", score: "ran" });
    const incremental = p.read("medbench.lock");
    for (const f of ["cache", "results", "medbench.lock"]) rmSync(p.path(f), { recursive: true });
    await statuses();
    expect(p.read("medbench.lock")).toBe(incremental);
  });

  it("a package that is not what package-lock.json pins is refused, naming it and npm ci", async () => {
    const lock = (version: string) =>
      JSON.stringify({
        name: "x",
        lockfileVersion: 3,
        packages: {
          "": {},
          "node_modules/fake-pad": { version },
          "node_modules/fake-suffix": { version: "1.0.0" },
        },
      });
    p.write("package-lock.json", lock("2.0.0"));
    expect((await p.run(["build", spec])).exitCode).toBe(0);
    p.write("package-lock.json", lock("2.0.1")); // bumped, and not installed
    // prompts, before parse, would run now: the refusal comes first, before any stage runs
    const template = p.read("specs/t1/prompts/user.txt");
    p.write("specs/t1/prompts/user.txt", `${template}Be brief.\n`);
    const before = p.snapshot();
    const r = await p.run(["build", spec]);
    expect(r.exitCode, r.stderr).toBe(2);
    expectCleanFailure(r.stderr);
    expect(r.stderr).toContain(
      "package-lock.json pins fake-pad 2.0.1, and node_modules/fake-pad holds 2.0.0",
    );
    expect(r.stderr).toContain("npm ci");
    expect(p.snapshot()).toBe(before);
    rmSync(p.path("package-lock.json"));
    p.write("specs/t1/prompts/user.txt", template);
  });

  /** The cache's entry of stage `name` made to name another output under the same key, as an entry put
   *  by a machine whose stage read what its key does not hold would (isolation leaves a build nothing such
   *  to read): the stage's manifest, its first output replaced by the object of another stage's. */
  const foreignEntry = (name: string) => {
    const lock = JSON.parse(p.read("medbench.lock")) as {
      specs: Record<string, { builds: Record<string, { stages: Record<string, StageEntry> }> }>;
    };
    const stages = Object.values(Object.values(lock.specs)[0]!.builds)[0]!.stages;
    const manifest = p.path("cache/stages", `${stages[name]!.key}.json`);
    const entry = JSON.parse(readFileSync(manifest, "utf8")) as { outputs: Record<string, string> };
    const output = Object.keys(entry.outputs)[0]!;
    entry.outputs[output] = Object.values(stages.download!.outputs)[0]!;
    writeFileSync(manifest, JSON.stringify(entry));
  };

  it("--refresh making other outputs under the same key says so and keeps the cached entry", async () => {
    foreignEntry("parse");
    const lock = p.read("medbench.lock");
    const before = p.snapshot(["cache/stages", "medbench.lock", "results"]);
    const r = await p.run(["build", spec, "--refresh", "parse"]);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain("--refresh ran stage parse again under the same key, and its outputs differ");
    expect(r.stderr).toMatch(/remove cache\/stages\/[0-9a-f]{64}\.json/);
    expect(p.snapshot(["cache/stages", "medbench.lock", "results"])).toBe(before);
    expect(p.read("medbench.lock")).toBe(lock);
    rmSync(p.path("cache"), { recursive: true });
    await statuses();
  });

  it("--refresh prompts is held to the same rule: its outputs are computed, not fetched", async () => {
    foreignEntry("prompts");
    const before = p.snapshot(["cache/stages", "medbench.lock", "results"]);
    const r = await p.run(["build", spec, "--refresh", "prompts"]);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      "--refresh ran stage prompts again under the same key, and its outputs differ",
    );
    expect(p.snapshot(["cache/stages", "medbench.lock", "results"])).toBe(before);
  });
});
