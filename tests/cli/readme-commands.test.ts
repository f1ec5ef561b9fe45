// Every command of README.md's "Commands" section, run as written (`npx medbench` is the repo's bin, run by
// node) in that order, in a project holding what a fresh clone holds (specs/, examples/, scripts/, one git
// commit), each with the exit code the README gives it; the server commands against the fake
// OpenAI-compatible server started as the README says; they leave the committed medbench.lock as it was
// (scripts/readme-lock.mjs regenerates it so). Then the examples of every command's --help, in an
// empty folder. Slow (it builds every task): no time limit a slow machine could reach.
import { afterAll, describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { REPO } from "../support/helpers.js";
import { BIN } from "../support/rig.js";

interface Line {
  text: string;
  args: string[];
  comment: string;
}

/** The README's commands in a section: indented lines that start with `npx medbench` or `node scripts/`. */
function commandsOf(markdown: string, heading: string): Line[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown
    .slice(start, end === -1 ? undefined : end)
    .split("\n")
    .filter((l) => /^ {4}(npx medbench|node scripts\/)/.test(l))
    .map((l) => {
      const [command, ...comment] = l.trim().split(/\s+#\s+/);
      return { text: l.trim(), args: command!.split(/\s+/), comment: comment.join(" # ") };
    });
}

const dirs: string[] = [];
const servers: ResultPromise[] = [];
afterAll(() => {
  for (const s of servers) s.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function run(cwd: string, args: string[]) {
  const [head, ...rest] = args;
  const argv = head === "npx" ? [BIN, ...rest.slice(1)] : rest;
  return execa("node", argv, { cwd, reject: false, env: { NO_COLOR: "1" }, stdin: "ignore" });
}

/** Starts the fake server as written and waits for the line it prints when it listens. */
async function startServer(cwd: string, args: string[]): Promise<void> {
  const server = execa("node", args.slice(1), { cwd, reject: false, stdin: "ignore" });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on("data", (d: Buffer) => {
      if (String(d).includes("fake OpenAI-compatible server on")) resolve();
    });
    void server.then((r) =>
      reject(new Error(`the fake server stopped (is port 8000 taken?): ${String(r.stderr)}`)),
    );
  });
}

/** `stats ci` on a run's items.jsonl pools every subset: where its point is not the build table's
 *  exact_match (the clean subset's), the README says so beside the command. */
function pooledExplained(project: string, line: Line, stdout: string): void {
  const input = line.args[line.args.indexOf("--input") + 1]!;
  const metrics = JSON.parse(readFileSync(join(project, dirname(input), "metrics.json"), "utf8")) as {
    metrics: { exact_match: { value: number } };
  };
  const point = (JSON.parse(stdout) as { point: number }).point;
  if (point !== metrics.metrics.exact_match.value)
    expect(line.comment, line.text).toMatch(
      /every subset pooled; the table's exact_match is the clean subset's/,
    );
}

describe("README.md", () => {
  it("runs every command of its Commands section as written, with the exit code it gives", async () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const lines = commandsOf(readme, "## Commands");
    // What a clone holds that the commands read, and one commit (diff reads HEAD:specs/…).
    const project = mkdtempSync(join(tmpdir(), "medbench-readme-"));
    dirs.push(project);
    for (const d of ["specs", "examples", "scripts"])
      cpSync(join(REPO, d), join(project, d), { recursive: true });
    cpSync(join(REPO, "medbench.lock"), join(project, "medbench.lock")); // committed, as a clone has it
    const git = (...a: string[]) =>
      execa("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...a], { cwd: project });
    await git("init", "-q");
    await git("add", ".");
    await git("commit", "-qm", "clone");

    const needs = lines.filter((l) => /\bneeds the (KHDP release|network)\b/.test(l.comment));
    // Only these two are left out, and the README says why.
    expect(needs.map((l) => l.args.slice(2, 4).join(" "))).toEqual([
      "build specs/voice-command.yaml",
      "build specs/mtsamples.yaml",
    ]);
    let ran = 0;
    for (const line of lines) {
      if (needs.includes(line)) continue;
      if (line.args[0] === "node" && line.args[1] === "scripts/fake-openai.mjs") {
        await startServer(project, line.args);
        continue;
      }
      const want = /\bexit 1 until\b/.test(line.comment) ? 1 : 0;
      const r = await run(project, line.args);
      expect(r.exitCode, `${line.text}\n${r.stderr}`).toBe(want);
      expect(r.stderr, line.text).not.toContain("internal error");
      if (line.args[2] === "stats" && line.text.includes("items.jsonl"))
        pooledExplained(project, line, r.stdout);
      ran++;
    }
    expect(ran).toBeGreaterThanOrEqual(20);
    // The commands leave the clone's lock as committed: it records every build they make.
    expect(
      readFileSync(join(project, "medbench.lock"), "utf8") ===
        readFileSync(join(REPO, "medbench.lock"), "utf8"),
      "medbench.lock changed: it lacks a build the README makes, or its keys are stale; " +
        "regenerate it with node scripts/readme-lock.mjs and commit it",
    ).toBe(true);
  }, 0);

  it("runs the examples of every command's --help, in an empty folder", async () => {
    const project = mkdtempSync(join(tmpdir(), "medbench-help-"));
    dirs.push(project);
    const main = await run(project, ["npx", "medbench", "--help"]);
    const names = [...main.stdout.matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1]!);
    expect(names).toEqual(expect.arrayContaining(["build", "status", "init", "new-task"]));
    // init first (it refuses a folder with its files), then new-task, then the others.
    const order = ["init", "new-task", ...names.filter((n) => n !== "init" && n !== "new-task")];
    let ran = 0;
    for (const name of order) {
      const help = (await run(project, ["npx", "medbench", name, "--help"])).stdout;
      const examples = help.split("\nexamples:\n")[1] ?? "";
      for (const l of examples.split("\n").filter((x) => x.trim().startsWith("npx medbench"))) {
        const args = l
          .trim()
          .split(/\s+#\s+/)[0]!
          .split(/\s+/);
        const r = await run(project, args);
        expect(r.exitCode, `${name} --help: ${l.trim()}\n${r.stderr}`).toBe(0);
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(6);
  }, 0);
});
