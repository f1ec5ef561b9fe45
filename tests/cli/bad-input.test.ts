// Bounded work, clean errors, one behaviour per flag. Each bad input of the audit, driven through
// the CLI as a user types it: refused with its exit code and a message that says what and where, no stack
// trace, no hang, and cache, lock and results as they were (Project.refuses checks all three).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execa, execaSync } from "execa";
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { BIN, expectCleanFailure, Project, SUMS_SPECS } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { startFake, type Fake } from "../support/fake.js";
import { inMountNamespace, namespacesWork } from "../support/small-disk.js";

const SPEC = "specs/voice-command.yaml";
const RESULT = "results/kor-surgical-robot-voice-command/medbench_prior";

/** A routes file with one route `fake` whose line `field: value` is as given. */
const routes = (fields: string) => `routes:
  fake:
${fields
  .split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
    request:
      thinking_off: {}
`;

describe("bad input is refused cleanly", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    // Something to lose: a cache, a lock and a result that every refusal below must leave as they are.
    await p.buildSpec(SPEC, ["--quiet"]);
    p.write("rows.jsonl", '{"id": "a", "g": "x", "v": 1}\n{"id": "b", "g": "y", "v": 0}\n');
  });
  afterAll(() => p.remove());

  // A spec line edited (the published spec's hash recomputed when the edit is inside `spec:`).
  const specCases: [string, (t: string) => string, RegExp][] = [
    [
      "resamples: 1000000000 (a hang)",
      (t) => t.replace("      resamples: 1000\n", "      resamples: 1000000000\n"),
      /voice-command\.yaml:\d+:\d+: .*resamples: 1000000000 is out of range[\s\S]*≤ 100000/,
    ],
    [
      "level: .nan",
      (t) => t.replace("      level: 0.95\n", "      level: .nan\n"),
      /voice-command\.yaml:\d+:14: \.nan is not a finite number/,
    ],
    [
      "an unknown YAML tag (!!js/function)",
      (t) => t.replace("slot_compare: casefold", 'slot_compare: !!js/function "casefold"'),
      /voice-command\.yaml:\d+:\d+: the YAML tag !!js\/function is not one medbench reads/,
    ],
    [
      "a sample.files entry ../../etc/hostname",
      (t) => t.replace("          train/train_v0.2.jsonl: 1705", "          ../../etc/hostname: 1705"),
      /voice-command\.yaml:\d+:\d+: .*sample path \.\.\/\.\.\/etc\/hostname leaves the sample folder/,
    ],
  ];
  for (const [name, edit, message] of specCases)
    it(`a spec with ${name}`, async () => {
      expect(await p.refuses(edit)).toMatch(message);
    });

  it("a spec with temperature: .nan in its published part (and a spec_hash to match)", async () => {
    const pristine = p.read(SPEC);
    p.edit(SPEC, (t) => t.replace("    temperature: 0\n", "    temperature: .nan\n"));
    const hash = (await p.run(["hash", SPEC])).stdout.trim();
    p.write(SPEC, pristine);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const err = await p.refuses((t) =>
      t
        .replace("    temperature: 0\n", "    temperature: .nan\n")
        .replace(/^spec_hash: .*$/m, `spec_hash: ${hash}`),
    );
    expect(err).toMatch(/voice-command\.yaml:\d+:18: \.nan is not a finite number/);
  });

  // A registry (--registry) with one bad route.
  const registryCases: [string, string, RegExp][] = [
    [
      'base_url: "http://"',
      'base_url: "http://"',
      /r\.yaml:3:15: .*base_url "http:\/\/" is not an http\(s\) URL/,
    ],
    [
      'base_url: "http://a b c/v1"',
      'base_url: "http://a b c/v1"',
      /r\.yaml:3:15: .*base_url "http:\/\/a b c\/v1" is not an http\(s\) URL/,
    ],
    [
      "concurrency: 1000000000",
      "base_url: http://127.0.0.1:9/v1\nconcurrency: 1000000000",
      /r\.yaml:4:18: .*concurrency: must be <= 256/,
    ],
    [
      "timeout_s: .nan",
      "base_url: http://127.0.0.1:9/v1\ntimeout_s: .nan",
      /r\.yaml:4:16: \.nan is not a finite/,
    ],
  ];
  for (const [name, fields, message] of registryCases)
    it(`a registry with ${name}`, async () => {
      p.write("r.yaml", routes(fields));
      const err = await p.refuses(null, {
        args: ["build", SPEC, "--model", "fake/m", "--registry", "r.yaml"],
      });
      expect(err).toMatch(message);
    });

  // Command lines: usage mistakes and inputs that are not what the command reads.
  const argCases: [string, string[], RegExp][] = [
    [
      "--cache medbench.lock",
      ["build", SPEC, "--cache", "medbench.lock"],
      /medbench\.lock is a file, not a folder/,
    ],
    // Node's recursive mkdir never returned here: /proc answers ENOENT for /proc/x, which it then retries.
    [
      "--cache /proc/x/c (a hang)",
      ["build", SPEC, "--cache", "/proc/x/c"],
      /cannot create \/proc\/x\/c \(ENOENT at \/proc\/x\): name a folder you can write to/,
    ],
    ['--data-dir ""', ["build", SPEC, "--data-dir", ""], /--data-dir "" names no folder/],
    [
      "diff of a range (HEAD..HEAD:spec)",
      ["diff", SPEC, `HEAD..HEAD:${SPEC}`],
      /HEAD\.\.HEAD is not a git revision of this project/,
    ],
    ["hash of a FIFO (a hang)", ["hash", "fifo"], /fifo: not a regular file/],
    [
      "stats --input /dev/zero (a hang)",
      ["stats", "ci", "--input", "/dev/zero", "--value", "v"],
      /not a regular/,
    ],
    [
      "stats --resamples 1e9 (a hang)",
      ["stats", "ci", "--input", "rows.jsonl", "--value", "v", "--resamples", "1000000000"],
      /--resamples 1000000000: give 1 to 100,000/,
    ],
    // Flags that were accepted and ignored.
    [
      "status --refresh",
      ["status", SPEC, "--refresh", "model"],
      /status does not take --refresh; its options: /,
    ],
    ["status --frozen", ["status", SPEC, "--frozen"], /status does not take --frozen/],
    ["export --limit", ["export", RESULT, "-o", "x.tar.gz", "--limit", "2"], /export does not take --limit/],
    [
      "export --model",
      ["export", RESULT, "-o", "x.tar.gz", "--model", "a/b"],
      /export does not take --model/,
    ],
    ["verify --frozen", ["verify", "x.tar.gz", "--frozen"], /verify does not take --frozen/],
    ["verify --subset", ["verify", "x.tar.gz", "--subset", "clean"], /verify does not take --subset/],
    [
      "stats ci --a",
      ["stats", "ci", "--input", "rows.jsonl", "--value", "v", "--a", "x"],
      /stats ci does not take --a/,
    ],
  ];
  for (const [name, args, message] of argCases)
    it(name, async () => {
      if (args.includes("fifo") && !p.exists("fifo")) execaSync("mkfifo", [p.path("fifo")]);
      if (args[0] === "diff" && !p.exists(".git")) {
        const git = (...a: string[]) => execaSync("git", a, { cwd: p.dir });
        git("init", "-q");
        git("add", "specs");
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "specs");
      }
      const err = await p.refuses(null, { args });
      expect(err).toMatch(message);
    });

  it("a refused flag names the command's own flags", async () => {
    const err = await p.refuses(null, { args: ["export", RESULT, "-o", "x.tar.gz", "--frozen"] });
    expect(err).toContain(
      "export does not take --frozen; its options: -o/--output, --project, --cache, --json",
    );
  });

  // stats inputs: each line is a JSON object whose value is a verdict or a score in [0, 1].
  const statsCases: [string, string | Buffer, RegExp][] = [
    ["a line 5", '{"v": 1}\n5\n', /in\.jsonl:2: not a JSON object/],
    ["a line null", "null\n", /in\.jsonl:1: not a JSON object/],
    ["a value 1e308", '{"v": 1}\n{"v": 1e308}\n', /in\.jsonl:2: value 1e\+308 is not in \[0, 1\]/],
    ["a value 1e999", '{"v": 1e999}\n', /in\.jsonl:1: value Infinity is not in \[0, 1\]/],
    ["a value -5", '{"v": -5}\n', /in\.jsonl:1: value -5 is not in \[0, 1\]/],
    ["a value 7", '{"v": 0}\n\n{"v": 7}\n', /in\.jsonl:3: value 7 is not in \[0, 1\]/],
    ["a 30-digit value", `{"v": ${"9".repeat(30)}}\n`, /in\.jsonl:1: value 1e\+30 is not in \[0, 1\]/],
    [
      "a 30-digit cluster id",
      `{"v": 1, "g": ${"1".repeat(30)}}\n{"v": 0, "g": ${"1".repeat(29)}2}\n`,
      /in\.jsonl:1: `g` 1\.1+e\+29 is not a whole number below 2\^53/,
    ],
    [
      "non-UTF-8 bytes",
      Buffer.concat([
        Buffer.from('{"v": 1}\n{"v": 0, "g": "'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}\n'),
      ]),
      /in\.jsonl:2: not UTF-8 text/,
    ],
  ];
  for (const [name, text, message] of statsCases)
    it(`stats ci with ${name}`, async () => {
      p.write("in.jsonl", text);
      const cluster = /"g"/.test(text.toString("latin1")) ? ["--cluster", "g"] : [];
      const err = await p.refuses(null, {
        args: ["stats", "ci", "--input", "in.jsonl", "--value", "v", ...cluster],
      });
      expect(err).toMatch(message);
    });

  it("stats paired with a cluster that differs between A and B names the item", async () => {
    p.write("a.jsonl", '{"id": "i1", "g": "x", "v": 1}\n{"id": "i2", "g": "y", "v": 0}\n');
    p.write("b.jsonl", '{"id": "i2", "g": "y", "v": 1}\n{"id": "i1", "g": "z", "v": 1}\n');
    const args = ["stats", "paired", "--a", "a.jsonl", "--b", "b.jsonl", "--value", "v", "--id", "id"];
    const err = await p.refuses(null, { args: [...args, "--cluster", "g"] });
    expect(err).toMatch(/b\.jsonl:2: item "i1" is in cluster "z", but in cluster "x" in a\.jsonl:1/);
    // The same files without clusters pair as before.
    const ok = await p.run(args);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ n: 2, b: 0, c: 1 });
  });

  it("scripts/fake-openai.mjs --help prints its usage; an unknown option is a usage error", async () => {
    const script = resolve(REPO, "scripts/fake-openai.mjs");
    const help = await execa("node", [script, "--help"], { reject: false });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/^usage: node scripts\/fake-openai\.mjs/);
    const bad = await execa("node", [script, "--frobnicate"], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/error: unknown option --frobnicate/);
    expectCleanFailure(bad.stderr);
  });
});

describe("a route above 10 requests in flight", () => {
  let fake: Fake;
  let p: Project;
  beforeAll(async () => {
    fake = await startFake({ latencyMs: 20 });
    p = new Project();
  });
  afterAll(async () => {
    await fake.close();
    p.remove();
  });

  it("builds without a MaxListenersExceededWarning (one abort listener per request in flight)", async () => {
    p.write("r.yaml", routes(`base_url: ${fake.url}\nconcurrency: 32\nmax_failures_in_a_row: 1000`));
    const r = await p.run(["build", SPEC, "--model", "fake/m", "--registry", "r.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.maxOpen).toBeGreaterThan(10); // the listeners really were more than Node's default
    expect(r.stderr).not.toMatch(/MaxListenersExceeded|memory leak/);
  });
});

// The disk really full (as tests/runner/disk.test.ts does it): a private mount namespace with a small tmpfs
// on the project's cache/, filled up to `freeKb` of room. Each room size stops the build at another write
// (the build's lock, a stage's object, the stat cache saved after a failed stage, …).
describe.runIf(namespacesWork())("a full disk under cache/", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project(SUMS_SPECS);
  });
  afterAll(() => p.remove());

  for (const freeKb of [0, 8, 24, 64])
    it(`with ${freeKb} KiB free: a clear "no space left" (exit 1), no stack, no lock left`, async () => {
      await inMountNamespace(p, [
        "mkdir -p cache && mount -t tmpfs -o size=256k tmpfs cache",
        `(dd if=/dev/zero of=cache/fill bs=1k count=${256 - freeKb} 2>/dev/null || true)`,
        `node ${BIN} build specs/sums.yaml 2>stderr.txt; echo $? > rc.txt`,
        "ls -A cache/locks > locks.txt 2>/dev/null || true",
      ]);
      const stderr = p.read("stderr.txt");
      expect(p.read("rc.txt").trim(), stderr).toBe("1");
      expect(stderr).toMatch(/no space left on (the )?device/i);
      expectCleanFailure(stderr);
      expect(p.read("locks.txt").trim(), "a lock without its owner").toBe("");
      expect(p.exists("medbench.lock")).toBe(false);
      expect(p.exists("results") ? readdirSync(p.path("results")) : []).toEqual([]);
    });
});
