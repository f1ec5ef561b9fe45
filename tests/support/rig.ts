// The test rig: a temp project holding a copy of the spec files, and the real CLI run in it with execa.
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
  existsSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { createHash } from "node:crypto";
import { execa } from "execa";
import ts from "typescript";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { Fake } from "./fake.js";
import { REPO } from "./helpers.js";

export const BIN = resolve(REPO, "bin/medbench.js");

export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The result of `build --json`: the run, each stage's status by name, and the summary line. */
export interface Built {
  run: Run;
  status: Record<string, string>;
  summary: { results: string; stages: { name: string; status: string; key: string }[] };
}

/** The fixture task's spec folder (tests/fixtures/README.md): copy it as a project's specs/. */
export const SUMS_SPECS = resolve(REPO, "tests/fixtures/sums/specs");
/** The fixture task's spec in a project made on SUMS_SPECS. */
export const SUMS_SPEC = "specs/sums.yaml";

export class Project {
  readonly dir: string;
  /** `copySpecs`: true copies the repo's specs/; a path copies that folder as specs/ (a fixture's). */
  constructor(copySpecs: boolean | string = true) {
    this.dir = mkdtempSync(join(tmpdir(), "medbench-test-"));
    if (copySpecs)
      cpSync(copySpecs === true ? resolve(REPO, "specs") : copySpecs, join(this.dir, "specs"), {
        recursive: true,
      });
  }
  path(...p: string[]): string {
    return join(this.dir, ...p);
  }
  read(p: string): string {
    return readFileSync(this.path(p), "utf8");
  }
  write(p: string, text: string | Buffer): void {
    writeFileSync(this.path(p), text);
  }
  edit(p: string, f: (text: string) => string): void {
    this.write(p, f(this.read(p)));
  }
  exists(p: string): boolean {
    return existsSync(this.path(p));
  }

  async run(args: string[], env: Record<string, string> = {}, bin = BIN): Promise<Run> {
    const r = await this.start(args, env, bin);
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
  }

  /** The CLI started, not awaited: for tests that watch its output as it runs, or kill it. */
  start(args: string[], env: Record<string, string> = {}, bin = BIN) {
    return execa("node", [bin, ...args], {
      cwd: this.dir,
      reject: false,
      env: { NO_COLOR: "1", ...env },
      extendEnv: true,
      stdin: "ignore",
    });
  }

  /** `command` on the voice-command spec with the fake's route and model (`buildAgainstFake`'s). */
  private static againstFake(command: string, args: string[]): string[] {
    return [
      command,
      "specs/voice-command.yaml",
      "--model",
      "fake/test-model",
      "--registry",
      "routes.yaml",
      ...args,
    ];
  }

  /** The args of `status` of what `buildAgainstFake` builds, then `args`. */
  static fakeStatusArgs(args: string[] = []): string[] {
    return Project.againstFake("status", args);
  }

  /** The args of `buildAgainstFake`. */
  static fakeBuildArgs(args: string[] = []): string[] {
    return Project.againstFake("build", ["--json", ...args]);
  }

  /** build --json of the voice-command spec: the stages' statuses by name. */
  build(args: string[] = [], env: Record<string, string> = {}): Promise<Built> {
    return this.buildSpec("specs/voice-command.yaml", args, env);
  }

  /** `build SPEC --json` of any spec (with `bin`: another medbench install): the stages' statuses by
   *  name. */
  async buildSpec(
    spec: string,
    args: string[] = [],
    env: Record<string, string> = {},
    bin = BIN,
  ): Promise<Built> {
    const run = await this.run(["build", spec, "--json", ...args], env, bin);
    if (run.exitCode !== 0) throw new Error(`build failed (${run.exitCode}):\n${run.stderr}`);
    const summary = JSON.parse(run.stdout.trim().split("\n").pop()!);
    return {
      run,
      status: Object.fromEntries(
        summary.stages.map((s: { name: string; status: string }) => [s.name, s.status]),
      ),
      summary,
    };
  }

  /** `build --json` of the voice-command spec against the route `fake` of this project's routes.yaml. */
  buildAgainstFake(args: string[] = [], env: Record<string, string> = {}): Promise<Run> {
    return this.run(Project.fakeBuildArgs(args), env);
  }

  /**
   * Edits a file (a spec, by default the voice-command one; `null`: no edit), runs the command, restores the
   * file, and checks that the command was refused cleanly: the exit code, no stack trace, and cache, lock
   * and results untouched. Returns stderr, for the message's own checks.
   */
  async refuses(
    edit: ((text: string) => string) | null,
    o: { file?: string; args?: string[]; code?: number } = {},
  ): Promise<string> {
    const { file = "specs/voice-command.yaml", code = 2 } = o;
    const args = o.args ?? ["build", file];
    const pristine = this.read(file);
    const changed = edit ? edit(pristine) : pristine;
    if (edit) expect(changed, "the edit applies").not.toBe(pristine);
    this.write(file, changed);
    const before = this.snapshot();
    const r = await this.run(args);
    this.write(file, pristine);
    expect(r.exitCode, r.stderr).toBe(code);
    expectCleanFailure(r.stderr);
    expect(this.snapshot()).toBe(before);
    return r.stderr;
  }

  /** A fingerprint of every file under the given folders (to show that a failed command changed nothing). */
  snapshot(paths = ["cache", "medbench.lock", "results"]): string {
    const h = createHash("sha256");
    const walk = (p: string) => {
      if (!existsSync(p)) return;
      const st = statSync(p);
      if (st.isDirectory()) {
        for (const n of readdirSync(p).sort()) if (n !== "stat-cache.json") walk(join(p, n));
      } else h.update(relative(this.dir, p)).update(readFileSync(p));
    };
    for (const p of paths) walk(this.path(p));
    return h.digest("hex");
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A project set up as a user sets one up: `init`, `new-task NAME`, and the task built once. */
export async function userTaskProject(name = "t1"): Promise<Project> {
  const p = new Project(false);
  expect((await p.run(["init"])).exitCode).toBe(0);
  expect((await p.run(["new-task", name])).exitCode).toBe(0);
  await p.buildSpec(`specs/${name}.yaml`);
  return p;
}

/** A copy of medbench itself (sharing node_modules), so that a test can edit and recompile its code. */
export class Install {
  readonly dir: string;
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "medbench-install-"));
    for (const d of [
      "bin",
      "dist",
      "src",
      "stages",
      "tasks",
      "tests/fixtures",
      "specs",
      "registry",
      "scripts",
      "package.json",
      "package-lock.json",
      "tsconfig.json",
    ])
      cpSync(resolve(REPO, d), join(this.dir, d), { recursive: true });
    symlinkSync(resolve(REPO, "node_modules"), join(this.dir, "node_modules"));
  }
  get bin(): string {
    return join(this.dir, "bin/medbench.js");
  }
  path(...p: string[]): string {
    return join(this.dir, ...p);
  }
  edit(p: string, f: (text: string) => string): void {
    const file = this.path(p);
    const changed = f(readFileSync(file, "utf8"));
    expect(changed, `the edit of ${p} applies`).not.toBe(readFileSync(file, "utf8"));
    writeFileSync(file, changed);
  }
  /**
   * What `npm run build` does for code, for the sources edited since the last compile: each source whose
   * sha256 differs from dist/sources.json (or is not there) is transpiled alone (TypeScript's
   * transpileModule, with the project's compiler options), then the sources are recorded. A whole `tsc -p`
   * type-checks every file and took most of a minute on a loaded two-core machine; the tests only need the
   * edit compiled.
   */
  async compile(): Promise<void> {
    const recorded = JSON.parse(readFileSync(this.path("dist/sources.json"), "utf8")) as Record<
      string,
      string
    >;
    const { options } = ts.convertCompilerOptionsFromJson(
      JSON.parse(readFileSync(this.path("tsconfig.json"), "utf8")).compilerOptions,
      this.dir,
    );
    const sources = ["src", "stages", "tasks", "tests/fixtures"].flatMap((top) =>
      readdirSync(this.path(top), { recursive: true })
        .map((f) => join(top, String(f)).split("\\").join("/"))
        .filter((f) => f.endsWith(".ts")),
    );
    // A task's JSON data, copied as tsc copies each one a module imports (resolveJsonModule).
    for (const data of readdirSync(this.path("tasks"), { recursive: true }).map(String))
      if (data.endsWith(".json")) cpSync(this.path("tasks", data), this.path("dist/tasks", data));
    for (const source of sources) {
      const text = readFileSync(this.path(source), "utf8");
      if (createHash("sha256").update(text).digest("hex") === recorded[source]) continue;
      const out = ts.transpileModule(text, { compilerOptions: options, fileName: source });
      writeFileSync(this.path("dist", source.replace(/\.ts$/, ".js")), out.outputText);
    }
    await execa("node", ["scripts/record-sources.mjs"], { cwd: this.dir });
  }
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The fake servers and projects a test file starts, closed and removed after each of its tests. */
export function cleanedAfterEach(): { servers: Fake[]; projects: Project[] } {
  const servers: Fake[] = [];
  const projects: Project[] = [];
  afterEach(async () => {
    while (servers.length) await servers.pop()!.close();
    while (projects.length) projects.pop()!.remove();
  });
  return { servers, projects };
}

/** A user mistake's message is medbench's own: no stack frame (with or without brackets), no crash. */
export function expectCleanFailure(stderr: string): void {
  expect(stderr).not.toMatch(/\n\s+at .*:\d+:\d+/);
  expect(stderr).not.toMatch(/Cannot read properties/);
  expect(stderr).not.toContain("internal error");
}

/** An installed copy of medbench and a project of the fixture task (SUMS_SPECS) for a describe's tests
 *  (which may break the copy): made at once, removed after them. */
export function installedFixture(): { install: Install; p: Project } {
  const fixture = { install: new Install(), p: new Project(SUMS_SPECS) };
  afterAll(() => {
    fixture.install.remove();
    fixture.p.remove();
  });
  return fixture;
}

/** A project of the fixture task (SUMS_SPECS) for a describe's tests: made at once, its spec built before
 *  the tests (`pristine`: the spec's text then, to write back after an edit), removed after them. */
export function builtFixture(): { p: Project; pristine: string } {
  const fixture = { p: new Project(SUMS_SPECS), pristine: "" };
  beforeAll(async () => {
    await fixture.p.buildSpec(SUMS_SPEC);
    fixture.pristine = fixture.p.read(SUMS_SPEC);
  });
  afterAll(() => fixture.p.remove());
  return fixture;
}
