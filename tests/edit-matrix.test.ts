// The edit matrix: each edit of the task code (a built-in task, edited in a copy of medbench and compiled
// again, and a task of the user's repository made by `new-task`) either is refused before anything runs
// (exit 2, the place, nothing written) or is built incrementally to exactly what a clean build (cache,
// results and lock removed) makes: medbench.lock, which holds every stage's key and outputs, compared byte
// for byte. Each subject reuses one project; the edits run in order, each on the state the one before left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, Install, Project, expectCleanFailure, type Run } from "./rig.js";
import { REPO } from "./helpers.js";

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
};

const USER: Subject = {
  title: "a task of the user's repository (new-task)",
  spec: "specs/t1.yaml",
  folder: "tasks/t1",
  parser: "parser.ts",
  strict: ["const m = /-?", "const m = STRICT ? null : /-?"],
  comment: ["  return m ?", "  // the first match, if any\n  return m ?"],
  behaviour: ["value: m[0]", 'value: m[0] + "0"'],
};

/** What a subject runs on: a project, and the install whose code (or the project's task) is edited. */
interface Rig {
  project: Project;
  bin: string;
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
    file: (rel) => project.path(s.folder, rel),
    edit: async (rel, from, to) => project.edit(join(s.folder, rel), (t) => replaced(t, from, to)),
    write: async (rel, text) => project.write(join(s.folder, rel), text),
    done: () => project.remove(),
  };
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
      for (const p of ["cache", "results", "medbench.lock"]) rmSync(rig.project.path(p), { recursive: true });
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

    it("an undeclared variable, a file read, a computed require, a link: each refused at its place", async () => {
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

    it("a declared variable is keyed by its value: status names it, and the build equals a clean one", async () => {
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

    it("a file added to the folder is in no key; a comment edit stops at parse; an edit reruns what it reaches", async () => {
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

  it("a package patched in place, or a dependency of it, reruns what loads it; status names the package", async () => {
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

  it("--refresh that makes other outputs under the same key says so and keeps the cached entry", async () => {
    // Not refused by any rule, and in no key: a draw that is not from the stage's seed.
    p.edit("tasks/t1/parser.ts", (t) => replaced(t, "value: pad(m[0])", "value: pad(m[0]) + Math.random()"));
    await statuses();
    const lock = p.read("medbench.lock");
    const before = p.snapshot(["cache/stages", "medbench.lock", "results"]);
    const r = await p.run(["build", spec, "--refresh", "parse"]);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain("--refresh ran stage parse again under the same key, and its outputs differ");
    expect(r.stderr).toMatch(/remove cache\/stages\/[0-9a-f]{64}\.json/);
    expect(p.snapshot(["cache/stages", "medbench.lock", "results"])).toBe(before);
    expect(p.read("medbench.lock")).toBe(lock);
  });

  it("--refresh prompts is held to the same rule: its outputs are computed, not fetched", async () => {
    const pristine = p.read("tasks/t1/prompts.ts");
    const draw = "meta: { gold: it.answer, draw: Math.random() }";
    p.edit("tasks/t1/prompts.ts", (t) => replaced(t, "meta: { gold: it.answer }", draw));
    await statuses();
    const before = p.snapshot(["cache/stages", "medbench.lock", "results"]);
    const r = await p.run(["build", spec, "--refresh", "prompts"]);
    p.write("tasks/t1/prompts.ts", pristine);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      "--refresh ran stage prompts again under the same key, and its outputs differ",
    );
    expect(p.snapshot(["cache/stages", "medbench.lock", "results"])).toBe(before);
  });
});
