// Nothing outside medbench's own folders is ever deleted or overwritten. A results.dir naming a
// folder medbench did not make (.git, specs, docs, cache, results, the project root), a misspelt
// placeholder, a variable that is empty, `.` or `..`, a user's file in a results folder, another spec's
// results, a link leading out, a spec outside the project, a bad `-o` or `--project`: each is refused (exit
// 2, at its place) before anything runs, and the whole project tree (every folder, file and link) is the
// same byte for byte. On the fixture task (tests/fixtures/README.md): what medbench owns is the runner's
// business, not a task's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Project,
  SUMS_SPEC,
  SUMS_SPECS,
  builtFixture,
  cleanedAfterEach,
  expectCleanFailure,
  type Run,
} from "../support/rig.js";

const SPEC = SUMS_SPEC;
const DIR_LINE = "  dir: results/{slug}/{model}";
const RESULT = "results/fixture-sums/medbench_calculator";
const MARKER = ".medbench-results.json";

/** Every folder, file (with its bytes' hash) and link under `root`, links not followed: the tree as it
 *  is. */
function tree(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(root, r));
      if (st.isSymbolicLink()) out.push(`link ${r} -> ${readlinkSync(join(root, r))}`);
      else if (st.isDirectory()) {
        out.push(`dir  ${r}`);
        walk(r);
      } else
        out.push(
          `file ${r} ${createHash("sha256")
            .update(readFileSync(join(root, r)))
            .digest("hex")}`,
        );
    }
  };
  walk("");
  return out;
}

/** A marker's record, without its seal line (when it has one). */
const markerBody = (text: string) =>
  JSON.parse(text.replace(/^medbench-sealed[^\n]*\n/, "")) as { spec: string; files: string[] };

/** The line (1-based) of results.dir in a spec's text; its value starts at column 8 (`  dir: `). */
const dirLine = (text: string) => text.split("\n").findIndex((l) => l.startsWith("  dir: results")) + 1;

describe("what medbench owns (25.1)", () => {
  const fixture = builtFixture();
  const { p } = fixture;
  let outside: string;
  beforeAll(async () => {
    // What a repository around the project holds: version control, docs, a README.
    mkdirSync(p.path(".git/objects/ab"), { recursive: true });
    p.write(".git/HEAD", "ref: refs/heads/main\n");
    p.write(".git/objects/ab/cdef", "a git object\n");
    mkdirSync(p.path("docs"));
    p.write("docs/notes.md", "# notes\n");
    p.write("README.md", "# the team's project\n");
    outside = mkdtempSync(join(tmpdir(), "medbench-outside-"));
  });
  afterAll(() => {
    rmSync(outside, { recursive: true, force: true });
  });

  /** Runs the CLI with SPEC replaced by `spec` (then restored): refused with exit 2, cleanly, and the
   *  project and the folder outside it exactly as they were. */
  async function refusedWhole(args: string[], spec = fixture.pristine): Promise<Run> {
    p.write(SPEC, spec);
    const before = [tree(p.dir), tree(outside)];
    let r: Run;
    try {
      r = await p.run(args);
      expect(r.exitCode, r.stderr).toBe(2);
      expectCleanFailure(r.stderr);
      expect([tree(p.dir), tree(outside)]).toEqual(before);
    } finally {
      p.write(SPEC, fixture.pristine);
    }
    return r;
  }

  it.each([
    [".git", /results\.dir \.git is not a folder inside the project's results\//],
    ["specs", /results\.dir specs is not a folder inside the project's results\//],
    ["docs", /results\.dir docs is not a folder inside the project's results\//],
    ["cache", /results\.dir cache is not a folder inside the project's results\//],
    ["cache/objects", /results\.dir cache\/objects is not a folder inside the project's results\//],
    ["results", /results\.dir results is not a folder inside the project's results\//],
    [".", /results\.dir \. is not a plain path/],
    ["results/.", /results\.dir results\/\. is not a plain path/],
    [
      "results/{slug}/{modle}",
      new RegExp(
        String.raw`unknown placeholder \{modle\}.*\n(.*\n)*.*` +
          String.raw`fix: use \{slug\} or a declared variable: \{slug\}, \{model\}`,
      ),
    ],
    [
      "results/{slug}",
      /results\/fixture-sums exists, and medbench did not make it \(it holds no \.medbench-results\.json\)/,
    ],
    [
      "results/{slug}/{model}/more",
      "medbench_calculator/more would be inside " +
        "results/fixture-sums/medbench_calculator, the results folder of another build",
    ],
  ])("results.dir: %s is refused at its place, and nothing is touched", async (dir, message) => {
    const spec = fixture.pristine.replace(DIR_LINE, `  dir: ${dir}`);
    expect(spec).not.toBe(fixture.pristine);
    const r = await refusedWhole(["build", SPEC], spec);
    expect(r.stderr).toContain(`${SPEC}:${dirLine(fixture.pristine)}:8: results.dir: `);
    expect(r.stderr).toMatch(message);
  });

  it.each([["run=.."], ["run=."], ["run="]])(
    "a variable in results.dir given --var %s is refused at results.dir, and nothing is touched",
    async (assignment) => {
      const spec = fixture.pristine
        .replace("variables:\n", "variables:\n  run: first\n")
        .replace(DIR_LINE, "  dir: results/{slug}/{run}");
      const r = await refusedWhole(["build", SPEC, "--var", assignment], spec);
      expect(r.stderr).toContain(`${SPEC}:${dirLine(spec)}:8: results.dir: `);
      expect(r.stderr).toMatch(/\{run\} would be "\.{0,2}" \(the variable run is "\.{0,2}"\)/);
      expect(r.stderr).toMatch(/fix: give run a plain name/);
    },
  );

  it("a user's files in a results folder are never removed: the build refuses, naming them", async () => {
    p.write(`${RESULT}/notes.txt`, "my notes\n");
    p.write(`${RESULT}/result.tar.gz`, "an exported bundle\n");
    try {
      const r = await refusedWhole(["build", SPEC]);
      expect(r.stderr).toMatch(
        "results/fixture-sums/medbench_calculator holds files " +
          "medbench did not write: notes.txt, result.tar.gz",
      );
    } finally {
      rmSync(p.path(`${RESULT}/notes.txt`));
      rmSync(p.path(`${RESULT}/result.tar.gz`));
    }
    // Moved out, the folder is medbench's again.
    const again = await p.run(["build", SPEC]);
    expect(again.exitCode, again.stderr).toBe(0);
  });

  it("another spec of the same slug does not take over the results of the first", async () => {
    p.write("specs/copy.yaml", fixture.pristine);
    try {
      const r = await refusedWhole(["build", "specs/copy.yaml"]);
      expect(r.stderr).toMatch(
        "results/fixture-sums/medbench_calculator holds the " +
          "results of specs/sums.yaml, not of specs/copy.yaml",
      );
    } finally {
      rmSync(p.path("specs/copy.yaml"));
    }
  });

  it("a spec outside the project is refused, and the lock never records a ../ path", async () => {
    cpSync(p.path(SPEC), join(outside, "sums.yaml"));
    try {
      const r = await refusedWhole(["build", join(outside, "sums.yaml")]);
      expect(r.stderr).toMatch(/the spec is outside the project/);
      expect(p.read("medbench.lock")).not.toContain("../");
    } finally {
      rmSync(join(outside, "sums.yaml"));
    }
  });

  it("a results path through a link leading out of the project is refused, not followed", async () => {
    symlinkSync(outside, p.path("results/linked"));
    try {
      const spec = fixture.pristine.replace(DIR_LINE, "  dir: results/linked/{model}");
      const r = await refusedWhole(["build", SPEC], spec);
      expect(r.stderr).toMatch(new RegExp(`results/linked is a link \\(to ${outside}\\)`));
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      rmSync(p.path("results/linked"));
    }
  });

  it("a results folder from before the marker (build.json of this spec) is adopted", async () => {
    const marker = p.read(`${RESULT}/${MARKER}`);
    expect(markerBody(marker)).toMatchObject({ spec: SPEC, files: expect.arrayContaining(["build.json"]) });
    rmSync(p.path(`${RESULT}/${MARKER}`));
    const r = await p.run(["build", SPEC]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(p.read(`${RESULT}/${MARKER}`)).toBe(marker);
  });

  it.each([
    ["medbench.lock", /-o medbench\.lock exists and is not a report: refusing to overwrite it/],
    ["README.md", /-o README\.md exists and is not a report: refusing to overwrite it/],
    [SPEC, /-o specs\/sums\.yaml exists and is not a report: refusing to overwrite it/],
    ["specs", /-o specs is a folder: name the report file/],
    [`${RESULT}/report.html`, /is inside the results folder results\/fixture-sums\/medbench_calculator/],
  ])("report -o %s is refused like export's -o", async (out, message) => {
    const r = await refusedWhole(["report", "-o", out]);
    expect(r.stderr).toMatch(message);
  });

  it("report -o replaces a page it wrote before; export -o refuses a results folder", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await p.run(["report", "-o", "report.html"]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const e = await refusedWhole(["export", RESULT, "-o", `${RESULT}/bundle.tar.gz`]);
    expect(e.stderr).toMatch(/is inside the results folder results\/fixture-sums\/medbench_calculator/);
    rmSync(p.path("report.html"));
  });

  it("--project must be a medbench project: no missing folder made, nor cache/ in a stranger", async () => {
    const missing = join(outside, "nowhere");
    const r = await refusedWhole(["build", SPEC, "--project", missing]);
    expect(r.stderr).toMatch(/--project .*nowhere: no such folder/);
    // A folder that is no medbench project (as /etc is not): nothing is created in it.
    const stranger = join(outside, "stranger");
    mkdirSync(stranger);
    writeFileSync(join(stranger, "passwd"), "root:x:0:0\n");
    try {
      for (const args of [
        ["build", SPEC, "--project", stranger],
        ["cache", "status", "--project", stranger],
        ["report", "-o", "r.html", "--project", stranger],
      ]) {
        const s = await refusedWhole(args);
        expect(s.stderr).toMatch(
          /--project .*stranger is not a medbench project \(it holds neither specs\/ nor/,
        );
      }
    } finally {
      rmSync(stranger, { recursive: true });
    }
  });
});

// Two values of a variable that fill results.dir alike, a value
// that is a list or a map, a hand-edited marker and a build.json copied into a folder of the user's.
describe("what medbench owns, third pass", () => {
  const { projects } = cleanedAfterEach();
  /** A project of the sums spec, removed after the test. */
  const sumsProject = () => {
    const q = new Project(SUMS_SPECS);
    projects.push(q);
    return q;
  };
  const RUN_SPEC = (text: string) =>
    text
      .replace("variables:\n", "variables:\n  run: first\n  judges: null\n")
      .replace(DIR_LINE, "  dir: results/{slug}/{run}");

  /** A project whose sums spec has the variable `run` in results.dir, built once with `--var run=a/b`. */
  async function runProject(): Promise<Project> {
    const q = sumsProject();
    q.edit(SPEC, RUN_SPEC);
    await q.buildSpec(SPEC, ["--var", "run=a/b"]);
    return q;
  }

  /** Runs the CLI: refused with exit 2, cleanly, and the project exactly as it was. */
  async function refusedIn(q: Project, args: string[]): Promise<Run> {
    const before = tree(q.dir);
    const r = await q.run(args);
    expect(r.exitCode, r.stderr).toBe(2);
    expectCleanFailure(r.stderr);
    expect(tree(q.dir)).toEqual(before);
    return r;
  }

  it("two values filling results.dir alike (a/b, a_b) never share a folder: 2nd refused", async () => {
    const q = await runProject();
    const r = await refusedIn(q, ["build", SPEC, "--var", "run=a_b"]);
    expect(r.stderr).toContain(`${SPEC}:${dirLine(q.read(SPEC))}:8: results.dir: `);
    expect(r.stderr).toMatch(
      "results/fixture-sums/a_b holds the results of run=a/b, " +
        "not of run=a_b: the two values name the same folder",
    );
    expect(r.stderr).toMatch(/fix: choose another value of run, or a results\.dir that keeps the two apart/);
    // The value that built it builds it again; another value has its own folder.
    for (const value of ["run=a/b", "run=a-b"]) {
      const again = await q.run(["build", SPEC, "--var", value]);
      expect(again.exitCode, again.stderr).toBe(0);
    }
    expect(JSON.parse(q.read("results/fixture-sums/a_b/build.json")).variables.run).toBe("a/b");
  });

  it.each([
    ["a list", "[a, b]"],
    ["a map", "{ a: 1 }"],
  ])("a variable of results.dir that is %s is refused at its value, not filled in", async (what, value) => {
    const q = sumsProject();
    q.edit(SPEC, (t) => RUN_SPEC(t).replace("  run: first\n", `  run: ${value}\n`));
    const line = q.read(SPEC).split("\n").indexOf(`  run: ${value}`) + 1;
    const r = await refusedIn(q, ["build", SPEC]);
    expect(r.stderr).toContain(`${SPEC}:${line}:8: variables.run: variable run is ${what}`);
    expect(r.stderr).toMatch(/fix: give run a plain value/);
    expect(q.exists("results")).toBe(false);
  });

  it("a list on the command line for a variable of results.dir is refused, naming its option", async () => {
    const q = sumsProject();
    q.edit(SPEC, (t) => RUN_SPEC(t).replace("{run}", "{judges}"));
    const r = await refusedIn(q, ["build", SPEC, "--judge", "x", "--judge", "y"]);
    expect(r.stderr).toMatch(/\{judges\} would be filled from a list, given by --judge \(\["x","y"\]\)/);
    expect(q.exists("results")).toBe(false);
  });

  it("a marker edited to list a user's file proves nothing: build refuses, the file is kept", async () => {
    const q = sumsProject();
    await q.buildSpec(SPEC);
    const marker = `${RESULT}/${MARKER}`;
    const sealedMarker = q.read(marker);
    q.write(`${RESULT}/notes.txt`, "my notes\n");
    // The record edited in place (its seal line, if any, kept), then as an unsealed file of the same record.
    const claim = (t: string) => t.replace('"build.json",', '"build.json",\n    "notes.txt",');
    q.write(marker, claim(sealedMarker));
    expect(markerBody(q.read(marker)).files).toContain("notes.txt");
    const r = await refusedIn(q, ["build", SPEC]);
    expect(r.stderr).toMatch(
      "medbench_calculator/.medbench-results.json is not the marker " +
        "medbench wrote there (its content does not match its seal",
    );
    expect(r.stderr).toMatch(/fix: move results\/fixture-sums\/medbench_calculator out of results\//);
    q.write(marker, claim(sealedMarker).replace(/^medbench-sealed[^\n]*\n/, ""));
    const u = await refusedIn(q, ["build", SPEC]);
    expect(u.stderr).toMatch(/medbench_calculator holds files medbench did not write: notes\.txt/);
    expect(q.read(`${RESULT}/notes.txt`)).toBe("my notes\n");
  });

  it("a marker resealed to list a user's file, an edited file the spec no longer writes: kept", async () => {
    const q = sumsProject();
    await q.buildSpec(SPEC);
    const marker = `${RESULT}/${MARKER}`;
    const sealedMarker = q.read(marker);
    const reseal = (body: string) =>
      `medbench-sealed sha256:${createHash("sha256").update(body).digest("hex")}\n${body}`;
    const body = sealedMarker.replace(/^medbench-sealed[^\n]*\n/, "");
    expect(reseal(body)).toBe(sealedMarker);
    q.write(`${RESULT}/notes.txt`, "my notes\n");
    q.write(marker, reseal(body.replace('"build.json",', '"build.json",\n    "notes.txt",')));
    const r = await refusedIn(q, ["build", SPEC]);
    expect(r.stderr).toMatch(
      "medbench_calculator holds files that are not what " +
        "its build wrote there: notes.txt (its marker lists",
    );
    expect(q.read(`${RESULT}/notes.txt`)).toBe("my notes\n");
    // A results file the marker rightly lists but the spec no longer writes goes only as the build wrote it.
    rmSync(q.path(`${RESULT}/notes.txt`));
    q.write(marker, sealedMarker);
    q.edit(SPEC, (t) => t.replace("    replies.jsonl: model/replies\n", ""));
    q.edit(`${RESULT}/replies.jsonl`, (t) => t + "my own line\n");
    const e = await refusedIn(q, ["build", SPEC]);
    expect(e.stderr).toMatch(/holds files that are not what its build wrote there: replies\.jsonl/);
    expect(q.read(`${RESULT}/replies.jsonl`)).toMatch(/my own line\n$/);
    q.edit(`${RESULT}/replies.jsonl`, (t) => t.replace("my own line\n", ""));
    await q.buildSpec(SPEC);
    expect(q.exists(`${RESULT}/replies.jsonl`)).toBe(false);
  });

  it("a build.json copied into a folder of the user's does not make medbench adopt it", async () => {
    const q = sumsProject();
    await q.buildSpec(SPEC);
    // The user moves the results away and makes the folder their own, with a copy of build.json.
    renameSync(q.path(RESULT), q.path("results/kept"));
    mkdirSync(q.path(RESULT));
    cpSync(q.path("results/kept/build.json"), q.path(`${RESULT}/build.json`));
    q.write(`${RESULT}/metrics.json`, '{"my": "numbers"}\n');
    const r = await refusedIn(q, ["build", SPEC]);
    expect(r.stderr).toMatch(/medbench_calculator holds files medbench did not write: metrics\.json/);
    // A folder of an older medbench, whose files are its build's, is still adopted: without a marker, and
    // with the unsealed marker of before.
    rmSync(q.path(RESULT), { recursive: true });
    renameSync(q.path("results/kept"), q.path(RESULT));
    const older = markerBody(q.read(`${RESULT}/${MARKER}`));
    for (const marker of [null, JSON.stringify({ files: older.files, format: 1, spec: SPEC }, null, 2)]) {
      if (marker === null) rmSync(q.path(`${RESULT}/${MARKER}`));
      else q.write(`${RESULT}/${MARKER}`, marker);
      const adopted = await q.run(["build", SPEC]);
      expect(adopted.exitCode, adopted.stderr).toBe(0);
      expect(q.read(`${RESULT}/${MARKER}`)).toMatch(/^medbench-sealed sha256:/);
    }
  });

  it("a results folder copied elsewhere is not medbench's: its marker names where it was made", async () => {
    const q = await runProject();
    // The user keeps a copy of the results, edits its numbers, then points results.dir at it.
    mkdirSync(q.path("results/fixture-sums/mine"));
    cpSync(q.path("results/fixture-sums/a_b"), q.path("results/fixture-sums/mine/a_b"), {
      recursive: true,
    });
    q.write("results/fixture-sums/mine/a_b/metrics.json", '{"my": "numbers"}\n');
    q.edit(SPEC, (t) => t.replace("dir: results/{slug}/{run}", "dir: results/{slug}/mine/{run}"));
    const r = await refusedIn(q, ["build", SPEC, "--var", "run=a/b"]);
    expect(r.stderr).toMatch(
      "mine/a_b/.medbench-results.json was written for results/fixture-sums/a_b: " +
        "a marker copied from another results folder proves nothing here",
    );
    expect(q.read("results/fixture-sums/mine/a_b/metrics.json")).toBe('{"my": "numbers"}\n');
  });
});
