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
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { createHash } from "node:crypto";
import { execa } from "execa";
import { expect } from "vitest";
import { REPO } from "./helpers.js";

export const BIN = resolve(REPO, "bin/medbench.js");

export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export class Project {
  readonly dir: string;
  constructor(copySpecs = true) {
    this.dir = mkdtempSync(join(tmpdir(), "medbench-test-"));
    if (copySpecs) cpSync(resolve(REPO, "specs"), join(this.dir, "specs"), { recursive: true });
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

  /** The args of `buildAgainstFake`. */
  static fakeBuildArgs(args: string[] = []): string[] {
    return [
      "build",
      "specs/voice-command.yaml",
      "--model",
      "fake/test-model",
      "--registry",
      "routes.yaml",
      "--json",
      ...args,
    ];
  }

  /** build --json: the stages' statuses by name. */
  async build(
    args: string[] = [],
    env: Record<string, string> = {},
  ): Promise<{
    run: Run;
    status: Record<string, string>;
    summary: { results: string; stages: { name: string; status: string; key: string }[] };
  }> {
    const run = await this.run(["build", "specs/voice-command.yaml", "--json", ...args], env);
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
   * file, and checks that the command was refused cleanly: the exit code, no stack trace, and cache, lock and
   * results untouched. Returns stderr, for the message's own checks.
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
    expect(r.stderr).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/); // no stack trace
    expect(r.stderr).not.toMatch(/Cannot read properties/);
    expect(r.stderr).not.toContain("internal error");
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
