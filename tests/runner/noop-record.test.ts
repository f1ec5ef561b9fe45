// A no-op build answered from its record (src/cli/noop-record.ts): it must replay only what a full no-op
// would have said, and any change to what a build consults must send the next build through the stages.
// Each case has its own project; the records are written once what they list has settled (2 s).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Install, Project, SUMS_SPECS } from "../support/rig.js";
import { age, REPO } from "../support/helpers.js";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";
import { hostname, tmpdir } from "node:os";
import { sha256Hex } from "../../src/hash/sha256.js";

const SPEC = "specs/sums.yaml";
const RESULTS = "results/fixture-sums/medbench_calculator";
const REPLAYED = "nothing changed since the last build";
const HOUR_AGO = new Date(Date.now() - 3600_000);
const settle = () => new Promise((r) => setTimeout(r, 2200));
const CASES = [
  ...["replay", "spec", "input", "results", "cache", "env", "damaged", "trace", "code"],
  ...["registry", "subfolder", "removed", "waited", "linked", "edited", "status", "status-registry"],
] as const;
/** The arguments of a case's builds (the model stage reads its route from a registry file). */
const WITH_REGISTRY = ["--registry", "routes.yaml", "--model", "fake/m1"];
const ARGS: { [name: string]: string[] } = { registry: WITH_REGISTRY, "status-registry": WITH_REGISTRY };

interface Record {
  key: string;
  files: { [path: string]: unknown };
}

describe("a no-op build answered from its record", () => {
  let install: Install;
  let fake: Fake;
  const projects = {} as { [name in (typeof CASES)[number]]: Project };

  const noop = async (p: Project, args: string[] = [], env: { [k: string]: string } = {}) => {
    const built = await p.buildSpec(SPEC, args, env, install.bin);
    return { ...built, replayed: built.run.stderr.includes(REPLAYED) };
  };
  const allFresh = (status: { [stage: string]: string }) =>
    expect(new Set(Object.values(status))).toEqual(new Set(["fresh"]));
  const recordsOf = (p: Project): Record[] =>
    readdirSync(p.path("cache/noop")).map((f) => JSON.parse(p.read(join("cache/noop", f))) as Record);

  beforeAll(async () => {
    install = new Install();
    for (const d of ["dist", "src", "stages", "tasks", "tests", "package.json", "package-lock.json"]) {
      const path = install.path(d);
      if (statSync(path).isDirectory()) age(path, HOUR_AGO);
      else utimesSync(path, HOUR_AGO, HOUR_AGO);
    }
    fake = await startFake();
    for (const name of CASES) {
      projects[name] = new Project(SUMS_SPECS);
      projects[name].write("routes.yaml", `routes:\n${fakeRoute("fake", fake.url)}`);
      // A results file in a subfolder of the results folder (the subfolder is consulted too).
      if (name === "subfolder")
        projects[name].edit(SPEC, (t) =>
          t.replace(
            "    metrics.json: bootstrap/metrics\n",
            "$&    notes/metrics.json: bootstrap/metrics\n",
          ),
        );
      await projects[name].buildSpec(SPEC, ARGS[name] ?? [], {}, install.bin);
    }
    await settle();
    for (const name of CASES) {
      const recording = await noop(projects[name], ARGS[name]);
      expect(recording.replayed, name).toBe(false); // it records
    }
  });
  afterAll(async () => {
    await fake.close();
    install.remove();
    for (const p of Object.values(projects)) p.remove();
  });

  it("replays what the full no-op said: same stdout, every stage fresh, and says so on stderr", async () => {
    const p = projects.replay;
    const replayed = await noop(p);
    expect(replayed.replayed).toBe(true);
    allFresh(replayed.status);
    const keyed = await noop(p, ["--rekey"]);
    expect(keyed.replayed).toBe(false);
    expect(replayed.run.stdout).toBe(keyed.run.stdout); // the JSON summary, stage keys included
    const events = (r: typeof keyed) => r.run.stderr.split("\n").filter((l) => !l.includes(REPLAYED));
    expect(events(replayed)).toEqual(events(keyed));
    // The console's rendering, recorded by its own first no-op, is replayed the same.
    const first = await p.run(["build", SPEC], {}, install.bin);
    const second = await p.run(["build", SPEC], {}, install.bin);
    expect(first.stderr).not.toContain(REPLAYED);
    expect(second.stderr).toContain(REPLAYED);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stdout).toContain("fresh bootstrap");
  });

  it("an edited spec is keyed again: the changed stage reruns", async () => {
    const p = projects.spec;
    p.edit(SPEC, (s) => s.replace("resamples: 200", "resamples: 300"));
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    expect(built.status.bootstrap).toBe("ran");
  });

  it("an edited input file reruns the stage that reads it", async () => {
    const p = projects.input;
    p.edit("specs/sums/prompts/user.txt", (s) => s + "\n");
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    expect(built.status.prompts).toBe("ran");
  });

  it("a results file removed is put back, not reported fresh", async () => {
    const p = projects.results;
    rmSync(p.path(RESULTS, "items.jsonl"));
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    expect(p.exists(join(RESULTS, "items.jsonl"))).toBe(true);
  });

  it("an edited route of a --registry file reruns the model stage (its route is in its key)", async () => {
    const p = projects.registry;
    expect((await noop(p, ARGS.registry)).replayed).toBe(true);
    p.edit("routes.yaml", (s) => s + "      extra: { top_k: 5 }\n");
    const built = await noop(p, ARGS.registry);
    expect(built.replayed).toBe(false);
    expect(built.status.model).toBe("ran");
  });

  it("a file added to a subfolder of the results is seen, not replayed (and kept)", async () => {
    const p = projects.subfolder;
    expect((await noop(p)).replayed).toBe(true);
    p.write(join(RESULTS, "notes/stray.txt"), "not a results file\n");
    const r = await p.run(["build", SPEC, "--json"], {}, install.bin);
    expect(r.stderr).not.toContain(REPLAYED);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("holds files medbench did not write: notes/stray.txt");
    expect(p.read(join(RESULTS, "notes/stray.txt"))).toBe("not a results file\n");
  });

  it("a file removed while the no-op ran is not recorded as absent all along", async () => {
    const p = projects.removed;
    // tests/support/remove-on-read.mjs removes the spec when the build reads the metrics, after it read the
    // spec.
    const preload = pathToFileURL(resolve(REPO, "tests/support/remove-on-read.mjs")).href;
    const env = {
      NODE_OPTIONS: `--import ${preload}`,
      REMOVE_ON_READ: "metrics.json",
      REMOVE: p.path(SPEC),
    };
    // Arguments of their own: the first no-op of that key, so a full one (the record made above is not
    // used).
    const during = await noop(p, ["--quiet"], env);
    expect(during.replayed).toBe(false);
    allFresh(during.status);
    expect(p.exists(SPEC)).toBe(false);
    const after = await p.run(["build", SPEC, "--json", "--quiet"], {}, install.bin);
    expect(after.stderr).not.toContain(REPLAYED);
    expect(after.exitCode).toBe(2);
    expect(after.stderr).toContain("no such file");
  });

  it("a no-op that waited for another build is replayed without the wait", async () => {
    const p = projects.waited;
    // The build lock of this spec and variable set (src/runner/execution/executor.ts), held by this live
    // process.
    const variables = "limit=null model=medbench/calculator subset=null";
    const lock = p.path("cache/locks", `${sha256Hex(`${SPEC}\n${variables}\n`)}.lck`);
    mkdirSync(p.path("cache/locks"), { recursive: true });
    writeFileSync(lock, `${process.pid} ${hostname()}\n`);
    const waiting = p.start(["build", SPEC, "--json", "--quiet"], {}, install.bin);
    await new Promise<void>((done) =>
      waiting.stderr!.on("data", (chunk: Buffer) => {
        if (String(chunk).includes("waiting for another build")) done();
      }),
    );
    rmSync(lock);
    expect((await waiting).exitCode).toBe(0);
    const replayed = await p.run(["build", SPEC, "--json", "--quiet"], {}, install.bin);
    expect(replayed.stderr).toContain(REPLAYED);
    expect(replayed.stderr).not.toContain("waiting for another build");
  });

  it("an input's folder moved out of the project and linked back is refused, not replayed", async () => {
    const p = projects.linked;
    const outside = mkdtempSync(join(tmpdir(), "medbench-outside-"));
    try {
      // A move keeps every file's stat: only the folders on the way tell.
      renameSync(p.path("specs/sums/prompts"), join(outside, "prompts"));
      symlinkSync(join(outside, "prompts"), p.path("specs/sums/prompts"));
      const r = await p.run(["build", SPEC, "--json"], {}, install.bin);
      expect(r.stderr).not.toContain(REPLAYED);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain("through a link");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("a cache emptied by hand reruns the stages", async () => {
    const p = projects.cache;
    rmSync(p.path("cache/stages"), { recursive: true });
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    expect(built.status.bootstrap).toBe("ran");
  });

  it("another MEDBENCH_DATA_DIR is another build", async () => {
    const p = projects.env;
    const built = await noop(p, [], { MEDBENCH_DATA_DIR: p.path("specs/sums/sample") });
    expect(built.replayed).toBe(false);
  });

  it("a damaged record costs a full no-op, nothing else", async () => {
    const p = projects.damaged;
    for (const f of readdirSync(p.path("cache/noop"))) writeFileSync(p.path("cache/noop", f), "{ not json");
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    allFresh(built.status);
  });

  it("an edited record is not replayed: the build keys its stages and says what they are", async () => {
    const p = projects.edited;
    for (const f of readdirSync(p.path("cache/noop"))) {
      const record = JSON.parse(p.read(join("cache/noop", f))) as { stdout: string };
      const edited = record.stdout.replace('"status":"fresh"', '"status":"ran"');
      expect(edited, "the edit applies").not.toBe(record.stdout);
      p.write(join("cache/noop", f), JSON.stringify({ ...record, stdout: edited }));
    }
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    allFresh(built.status);
  });

  it("lists every path the full no-op consulted (by an fs trace, not medbench's bookkeeping)", async () => {
    const p = projects.trace;
    const traceFile = p.path("fs-trace.json");
    const preload = pathToFileURL(resolve(REPO, "tests/support/fs-trace.mjs")).href;
    const built = await noop(p, ["--rekey"], {
      NODE_OPTIONS: `--import ${preload}`,
      FS_TRACE_OUT: traceFile,
    });
    expect(built.replayed).toBe(false);
    const traced = JSON.parse(readFileSync(traceFile, "utf8")) as { [path: string]: string[] };
    const record = recordsOf(p).find((r) =>
      (JSON.parse(r.key) as { argv: string[] }).argv.includes("--rekey"),
    );
    expect(record, "the --rekey no-op was recorded").toBeDefined();
    const listed = new Set(Object.keys(record!.files));
    // Derived caches, the build's own lock files and temp folder, and a realpath (a check for links out of
    // the project: the files below are listed themselves) are not what a result depends on.
    const derived = ["code-memo.json", "stat-cache.json", "specs", "locks", "tmp", "noop"].map((n) =>
      p.path("cache", n),
    );
    // The cache folder itself is only checked to be a folder (a file named by --cache is refused).
    const unlisted = Object.entries(traced)
      .filter(([path]) => path !== p.path("cache"))
      .filter(([path]) => !derived.some((d) => path === d || path.startsWith(d + "/")))
      .filter(([path]) => !path.endsWith(".lck") && path !== traceFile)
      .filter(([, how]) => !(how.length === 1 && how[0] === "realpathSync"))
      .map(([path]) => path)
      .filter((path) => !listed.has(path));
    expect(unlisted).toEqual([]);
    for (const want of [p.path(SPEC), p.path("medbench.lock"), p.path(RESULTS, "metrics.json")])
      expect(listed.has(want), want).toBe(true);
  });

  it("status from the record reads no --registry file; one changed since is read and checked", async () => {
    const p = projects["status-registry"];
    const dir = mkdtempSync(join(tmpdir(), "medbench-loaded-"));
    const hook = join(dir, "loaded.cjs");
    writeFileSync(
      hook,
      'process.on("exit", () => require("fs").writeFileSync(process.env.LOADED_OUT, ' +
        'Object.keys(require.cache).join("\\n")));\n',
    );
    const out = join(dir, "loaded.txt");
    const status = () =>
      p.run(
        ["status", SPEC, ...WITH_REGISTRY],
        { NODE_OPTIONS: `--require ${hook}`, LOADED_OUT: out },
        install.bin,
      );
    const fromRecord = await status();
    expect(fromRecord.exitCode, fromRecord.stderr).toBe(0);
    expect(fromRecord.stdout).toMatch(/fresh\s+bootstrap/);
    expect(readFileSync(out, "utf8")).not.toContain(join("dist", "src", "model", "routes.js"));
    p.write("routes.yaml", "routes:\n  x: { base_url: 3 }\n");
    const broken = await status();
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain("routes.yaml:2:");
  });

  it("status, like keying, says all stages fresh from the record; keys them once one changed", async () => {
    const p = projects.status;
    // Which modules a status loaded (dist/ is CommonJS): the stage keying is runner/execution/status.js.
    const dir = mkdtempSync(join(tmpdir(), "medbench-loaded-"));
    const hook = join(dir, "loaded.cjs");
    writeFileSync(
      hook,
      'process.on("exit", () => require("fs").writeFileSync(process.env.LOADED_OUT, ' +
        'Object.keys(require.cache).join("\\n")));\n',
    );
    const status = async (...args: string[]) => {
      const out = join(dir, "loaded.txt");
      const r = await p.run(
        ["status", SPEC, ...args],
        { NODE_OPTIONS: `--require ${hook}`, LOADED_OUT: out },
        install.bin,
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const loaded = readFileSync(out, "utf8");
      const keyed = loaded.includes(join("dist", "src", "runner", "execution", "status.js"));
      // Nor the model's modules (prices, for an estimate): a status from the record has none to print.
      return { stdout: r.stdout, keyed, model: loaded.includes(join("dist", "src", "model")) };
    };
    for (const args of [["--json"], []]) {
      const fromRecord = await status(...args);
      expect(fromRecord.keyed).toBe(false);
      expect(fromRecord.model).toBe(false);
      renameSync(p.path("cache/noop"), p.path("cache/noop-away"));
      const keyed = await status(...args);
      renameSync(p.path("cache/noop-away"), p.path("cache/noop"));
      expect(keyed.keyed).toBe(true);
      expect(fromRecord.stdout).toBe(keyed.stdout);
    }
    allFresh(
      Object.fromEntries(
        JSON.parse((await status("--json")).stdout).stages.map((s: { name: string; state: string }) => [
          s.name,
          s.state,
        ]),
      ),
    );
    p.edit("specs/sums/prompts/user.txt", (s) => s + "\n");
    const changed = await status("--json");
    expect(changed.keyed).toBe(true);
    const states = JSON.parse(changed.stdout).stages as { name: string; state: string }[];
    expect(states.find((s) => s.name === "prompts")?.state).toBe("stale");
    rmSync(dir, { recursive: true, force: true });
  });

  // Last: it edits the install the other projects share.
  it("medbench's compiled code edited (same size and mtime), or a task file added: seen", async () => {
    const p = projects.code;
    const scorer = install.path("dist/tests/fixtures/sums/task/scorer.js");
    const before = statSync(scorer);
    const text = readFileSync(scorer, "utf8");
    expect(text).toContain('"correct sums"');
    writeFileSync(scorer, text.replace('"correct sums"', '"CORRECT SUMS"'));
    utimesSync(scorer, before.atime, before.mtime);
    const built = await noop(p);
    expect(built.replayed).toBe(false);
    expect(built.status.score).toBe("ran");
    await settle();
    expect((await noop(p)).replayed).toBe(false); // records again
    expect((await noop(p)).replayed).toBe(true);
    // A file added to the task's folder is seen (the folder is listed), and is in no key: no part reads it.
    writeFileSync(install.path("tests/fixtures/sums/task/table.txt"), "a data file of the task\n");
    const added = await noop(p);
    expect(added.replayed).toBe(false);
    expect(added.status.score).toBe("fresh");
  });
});

describe("a no-op build in a project without a tasks folder (a user's own repository)", () => {
  it("touches nothing in the project folder, so its record is written and replayed", async () => {
    const p = new Project();
    try {
      const build = () => p.run(["build", "specs/voice-command.yaml"]);
      expect((await build()).exitCode).toBe(0);
      // A build looks for tasks/voice-command/ in the project and, finding none, judges that absence by the
      // project folder: a lock file made and removed there in every build (medbench.lock's own) made every
      // no-op look unsettled, so none was ever recorded.
      await settle();
      const folder = statSync(p.dir).mtimeMs;
      const recording = await build();
      expect(recording.stderr).not.toContain(REPLAYED);
      expect(statSync(p.dir).mtimeMs).toBe(folder);
      expect(readdirSync(p.path("cache/noop")).length).toBe(1);
      const replayed = await build();
      expect(replayed.exitCode).toBe(0);
      expect(replayed.stderr).toContain(REPLAYED);
    } finally {
      p.remove();
    }
  });
});

describe("a no-op record of a task that declares an environment variable", () => {
  it("is not replayed once the variable's value differs: the stage that reads it runs", async () => {
    const p = new Project(false);
    try {
      for (const args of [["init"], ["new-task", "t1"]]) expect((await p.run(args)).exitCode).toBe(0);
      p.edit("tasks/t1/index.ts", (t) =>
        t.replace("contract: 2,", 'contract: 2,\n  environment: ["T1_SUFFIX"],'),
      );
      p.edit("tasks/t1/parser.ts", (t) =>
        t.replace("value: m[0]", 'value: m[0] + (process.env.T1_SUFFIX ?? "")'),
      );
      const build = (env: { [k: string]: string } = {}) => p.buildSpec("specs/t1.yaml", [], env);
      await build();
      await settle();
      expect((await build()).run.stderr).not.toContain(REPLAYED); // records
      expect((await build()).run.stderr).toContain(REPLAYED);
      const changed = await build({ T1_SUFFIX: "0" });
      expect(changed.run.stderr).not.toContain(REPLAYED);
      expect(changed.status).toMatchObject({ model: "fresh", parse: "ran", score: "ran" });
      const records = readdirSync(p.path("cache/noop")).map((f) => p.read(join("cache/noop", f)));
      expect(records.join("")).toContain('"env":{"T1_SUFFIX":null}'); // unset when recorded
    } finally {
      p.remove();
    }
  });
});
