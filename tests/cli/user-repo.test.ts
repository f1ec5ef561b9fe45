// medbench in a benchmark author's own repository, as a new user gets it: the package packed (`npm pack`),
// installed into an empty folder with no network (from what npm's cache already holds since `npm ci`), then
// `init`, a built-in task by name, a task of the repository scaffolded, built, edited, exported, verified.
// Slow (it installs medbench and its dependencies): one test, no time limit a slow machine could reach.
import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { REPO } from "../support/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "medbench-userrepo-"));
const project = join(dir, "project");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The installed medbench, run as `npx medbench` runs it (the bin npm linked into node_modules/.bin). */
const medbench = (...args: string[]) =>
  execa(join(project, "node_modules/.bin/medbench"), args, {
    cwd: project,
    reject: false,
    env: { NO_COLOR: "1" },
    stdin: "ignore",
  });

/** Stage name -> ran | fresh, from `build --json`'s last stdout line. */
async function build(spec: string): Promise<Record<string, string>> {
  const r = await medbench("build", spec, "--json");
  expect(r.exitCode, r.stderr).toBe(0);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
    stages: { name: string; status: string }[];
  };
  return Object.fromEntries(summary.stages.map((s) => [s.name, s.status]));
}

/**
 * A project whose only dependency is the packed medbench, locked to the exact versions medbench's own
 * package-lock.json pins (its dependencies, not its devDependencies): `npm ci --offline` then installs from
 * npm's cache alone. (`npm install --offline <tgz>` would need the registry's package documents to resolve
 * the versions, which `npm ci` never fetched.)
 */
function lockedProject(tarball: string): void {
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, Record<string, unknown>>;
  };
  const own = lock.packages[""]!;
  const from = `file:../${tarball}`;
  const packages: Record<string, unknown> = {
    "": { name: "project", dependencies: { medbench: from } },
    "node_modules/medbench": {
      version: own.version,
      resolved: from,
      dependencies: own.dependencies,
      bin: own.bin,
      engines: own.engines,
      license: own.license,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages))
    if (path.startsWith("node_modules/") && !entry.dev && !entry.devOptional) packages[path] = entry;
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "project", private: true, dependencies: { medbench: from } }, null, 2),
  );
  writeFileSync(
    join(project, "package-lock.json"),
    JSON.stringify({ name: "project", lockfileVersion: 3, requires: true, packages }, null, 2),
  );
}

describe("medbench installed from its packed tarball into an empty folder", () => {
  it("init, a built-in task, a task of the repository built, edited, exported and verified", async () => {
    // Packs the dist/ this test run compiled (`npm test` builds first); --ignore-scripts so that prepack
    // does not recompile dist/ under the other test files running at the same time.
    const packed = await execa("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], {
      cwd: REPO,
    });
    const tarball = packed.stdout.trim().split("\n").at(-1)!;
    expect(existsSync(join(dir, tarball))).toBe(true);
    await execa("mkdir", [project]);
    lockedProject(tarball);
    const install = await execa("npm", ["ci", "--offline", "--no-audit", "--no-fund"], {
      cwd: project,
      reject: false,
      env: { npm_config_update_notifier: "false" },
    });
    expect(install.exitCode, install.stderr).toBe(0);
    // An installed package ships its compiled code and runs nothing on install.
    const manifest = JSON.parse(
      readFileSync(join(project, "node_modules/medbench/package.json"), "utf8"),
    ) as {
      scripts: Record<string, string>;
    };
    for (const hook of ["preinstall", "install", "postinstall", "prepare"])
      expect(manifest.scripts[hook], hook).toBeUndefined();
    expect(existsSync(join(project, "node_modules/medbench/dist/src/cli/main.js"))).toBe(true);
    expect(existsSync(join(project, "node_modules/medbench/dist/tests"))).toBe(false);

    // init: what the repository needs, and never over an existing file.
    const init = await medbench("init");
    expect(init.exitCode, init.stderr).toBe(0);
    expect(readFileSync(join(project, ".gitignore"), "utf8").split("\n")).toEqual(
      expect.arrayContaining(["cache/", "results/", "node_modules/"]),
    );
    const routes = readFileSync(join(project, "routes.yaml"), "utf8");
    for (const route of ["vllm", "sglang", "ollama", "openrouter", "openai"])
      expect(routes).toMatch(new RegExp(`^  # ${route}:`, "m"));
    expect(readFileSync(join(project, "README.md"), "utf8")).toContain("npx medbench new-task");
    const again = await medbench("init");
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("routes.yaml, README.md exist");
    // The template is a registry medbench reads (every route commented out: none added).
    const status = await medbench("status", "voice-command", "--registry", "routes.yaml");
    expect(status.exitCode, status.stderr).toBe(0);

    // A built-in task by name, with nothing copied into the repository.
    const builtIn = await build("voice-command");
    expect(Object.values(builtIn).every((s) => s === "ran")).toBe(true);
    expect(existsSync(join(project, "specs"))).toBe(false);
    expect(readdirSync(join(project, "results"))).toEqual(["kor-surgical-robot-voice-command"]);
    const lock = JSON.parse(readFileSync(join(project, "medbench.lock"), "utf8")) as {
      specs: Record<string, unknown>;
    };
    expect(Object.keys(lock.specs)).toEqual(["node_modules/medbench/specs/voice-command.yaml"]);

    // A task of the repository: scaffolded, built offline on its two-item sample with its baseline.
    const scaffold = await medbench("new-task", "my-task");
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    expect(existsSync(join(project, "tasks/my-task/index.ts"))).toBe(true);
    const first = await build("specs/my-task.yaml");
    expect(Object.values(first).every((s) => s === "ran")).toBe(true);
    const metrics = JSON.parse(
      readFileSync(join(project, "results/my-task/medbench_reference/metrics.json"), "utf8"),
    ) as { metrics: { accuracy: { value: number; n: number } } };
    expect(metrics.metrics.accuracy).toMatchObject({ value: 1, n: 2 });
    // Keyed on the compiled modules of the repository's task and on the compiler's exact version.
    const parseKey = JSON.parse(
      (await medbench("build", "specs/my-task.yaml", "--json", "--rekey")).stdout.trim().split("\n").at(-1)!,
    ).stages.find((s: { name: string }) => s.name === "parse").key as string;
    const record = (
      JSON.parse(readFileSync(join(project, "cache/stages", `${parseKey}.json`), "utf8")) as {
        record: { code: Record<string, string>; packages: Record<string, string> };
      }
    ).record;
    expect(Object.keys(record.code)).toContain("project:tasks/my-task/parser.js");
    // The parser's module and what it imports, not the other parts (parts declared in index.ts).
    expect(Object.keys(record.code)).not.toContain("project:tasks/my-task/scorer.js");
    const tsVersion = (
      JSON.parse(readFileSync(join(project, "node_modules/typescript/package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    expect(record.packages.typescript).toBe(tsVersion);
    expect(Object.values(await build("specs/my-task.yaml")).every((s) => s === "fresh")).toBe(true);

    // The parser edited: a reply naming 5 is now no answer (q1's reference reply is "The answer is 5.").
    // Parts are declared (tasks/my-task/index.ts), so exactly the stages after the parser rerun.
    const parser = join(project, "tasks/my-task/parser.ts");
    writeFileSync(
      parser,
      readFileSync(parser, "utf8").replace(
        "export function parseReply({ reply }: ParseInput): ParsedReply {",
        "export function parseReply({ reply }: ParseInput): ParsedReply {\n" +
          '  if (reply.text.includes("5")) return { ok: false, value: null, error: "edited" };',
      ),
    );
    const edited = await build("specs/my-task.yaml");
    expect(edited).toEqual({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "ran",
      score: "ran",
      bootstrap: "ran",
    });
    // A syntax error is the user's, with its place.
    writeFileSync(parser, readFileSync(parser, "utf8") + "\nexport const broken = ;\n");
    const bad = await medbench("build", "specs/my-task.yaml");
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/tasks\/my-task\/parser\.ts:\d+:\d+/);
    expect(bad.stderr).not.toContain("internal error");
    writeFileSync(parser, readFileSync(parser, "utf8").replace("\nexport const broken = ;\n", ""));

    // Exported and verified.
    const exported = await medbench("export", "results/my-task/medbench_reference", "-o", "result.tar.gz");
    expect(exported.exitCode, exported.stderr).toBe(0);
    const verified = await medbench("verify", "result.tar.gz", "--run-task-code");
    expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain("verified: the published result is reproduced");
    // Anywhere else too: the bundle carries the task's sources, compiled by the verifier's medbench.
    const elsewhere = join(dir, "elsewhere");
    await execa("mkdir", [elsewhere]);
    const away = await execa(
      join(project, "node_modules/.bin/medbench"),
      ["verify", join(project, "result.tar.gz"), "--run-task-code"],
      { cwd: elsewhere, reject: false, env: { NO_COLOR: "1" }, stdin: "ignore" },
    );
    expect(away.exitCode, away.stdout + away.stderr).toBe(0);
    expect(away.stdout).toContain("verified: the published result is reproduced");
    const exportedBuiltIn = await medbench(
      "export",
      "results/kor-surgical-robot-voice-command/medbench_prior",
      "-o",
      "voice.tar.gz",
    );
    expect(exportedBuiltIn.exitCode, exportedBuiltIn.stderr).toBe(0);
    const verifiedBuiltIn = await medbench("verify", "voice.tar.gz");
    expect(verifiedBuiltIn.exitCode, verifiedBuiltIn.stdout + verifiedBuiltIn.stderr).toBe(0);

    // README's flow goes on: the built-in spec copied to edit, then both built, side by side.
    const copied = await medbench("init", "--task", "voice-command");
    expect(copied.exitCode, copied.stderr).toBe(0);
    await build("specs/voice-command.yaml");
    expect(
      existsSync(join(project, "results/kor-surgical-robot-voice-command/project/medbench_prior")),
    ).toBe(true);
    expect(Object.values(await build("voice-command")).every((s) => s === "fresh")).toBe(true);
    // report covers the built-in task built by name; check, hash and diff take a built-in's name.
    const report = await medbench("report", "-o", "report.html", "--json");
    expect(report.exitCode, report.stderr).toBe(0);
    // my-task, the built-in voice-command and its copy: each spec lists the one run it built.
    expect(JSON.parse(report.stdout)).toMatchObject({ runs: 3, tasks: 3 });
    const page = readFileSync(join(project, "report.html"), "utf8");
    expect(page).toContain("kor-surgical-robot-voice-command");
    expect(page).not.toMatch(/adding a route `medbench`/);
    const check = await medbench("check", "note-errors");
    expect(check.exitCode, check.stderr).toBe(1); // incomplete: nothing of its roster is built
    expect(check.stdout).toContain("medbench build note-errors --model medbench/random\n");
    expect(check.stdout).not.toMatch(/adding a route `medbench`/);
    const hashed = await medbench("hash", "voice-command");
    expect(hashed.exitCode, hashed.stderr).toBe(0);
    expect(hashed.stdout.trim()).toBe((await medbench("hash", "specs/voice-command.yaml")).stdout.trim());
    const diff = await medbench("diff", "voice-command", "specs/voice-command.yaml");
    expect(diff.exitCode, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("no stage invalidated");
    const named = await medbench("new-task", "voice-command");
    expect(named.exitCode).toBe(2);
    expect(named.stderr).toMatch(/voice-command is the name of a task medbench ships/);
    expect(existsSync(join(project, "tasks/voice-command"))).toBe(false);
  }, 0);
});
