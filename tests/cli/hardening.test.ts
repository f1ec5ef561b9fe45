// User mistakes and hostile inputs are refused with a clear message (what, where, how to fix),
// exit 2, no stack trace, nothing changed; a huge spec is parsed in linear time. On the fixture task
// (tests/fixtures/README.md): what is refused is the runner's, not any task's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { BIN, builtFixture, Project, SUMS_SPEC, SUMS_SPECS } from "../support/rig.js";

const SPEC = SUMS_SPEC;
const RESULT = "results/fixture-sums/medbench_calculator";
const NO_STACK = /\n\s+at .*\(.*:\d+:\d+\)/;

describe("hardening: clear refusals", () => {
  const fixture = builtFixture();
  const { p } = fixture;

  const refused = (args: string[], code = 2) => p.refuses(null, { file: SPEC, args, code });

  it("hash of a document whose spec is a string", async () => {
    p.write("doc.json", '{"spec": "a string"}');
    const err = await refused(["hash", "doc.json"]);
    expect(err).toMatch(/doc\.json:1:10: spec: `spec` is a string, not an object/);
  });

  it("a YAML alias bomb is refused, naming the file", async () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (const [prev, name] of [
      ["a", "b"],
      ["b", "c"],
      ["c", "d"],
    ])
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(", ")}]`);
    levels.push(`spec: [${Array(9).fill("*d").join(", ")}]`);
    p.write("bomb.yaml", levels.join("\n") + "\n");
    const err = await refused(["hash", "bomb.yaml"]);
    expect(err).toMatch(/error: bomb\.yaml: the document expands aliases too often/);
  });

  it("a duplicate key is still refused at its place", async () => {
    p.write("dup.yaml", "spec:\n  a: 1\n  a: 2\n");
    const err = await refused(["hash", "dup.yaml"]);
    expect(err).toMatch(/dup\.yaml:3:3: malformed YAML: Map keys must be unique/);
  });

  it("a pin that is not 64 hex characters is a schema error at its place", async () => {
    const pin = "702d93df6831412c7947bc4f3a11c2bef90d8b0cd2d7d812bb710c43237a2f04";
    expect(fixture.pristine).toContain(pin);
    p.write(SPEC, fixture.pristine.replace(pin, "702d93df6831"));
    try {
      const err = await refused(["build", SPEC]);
      expect(err).toMatch(
        /sums\.yaml:\d+:\d+: stages\.download\.params\.sample\.files\.items\.jsonl: is not a SHA-256 pin/,
      );
      expect(err).not.toContain("mismatch");
    } finally {
      p.write(SPEC, fixture.pristine);
    }
  });

  it.each([
    [
      "results.dir with ..",
      "dir: results/{slug}/{model}",
      "dir: ../elsewhere/{model}",
      /results\.dir: results\.dir \.\.\/elsewhere\/\{model\} leaves the project/,
    ],
    [
      "an absolute results.dir",
      "dir: results/{slug}/{model}",
      "dir: /tmp/medbench-out",
      /results\.dir: results\.dir \/tmp\/medbench-out leaves the project/,
    ],
    [
      "a results file with ..",
      "metrics.json: bootstrap/metrics",
      "../../m.json: bootstrap/metrics",
      /results\.files\.\.\.\/\.\.\/m\.json: results file \.\.\/\.\.\/m\.json leaves the results folder/,
    ],
    [
      "an absolute results file",
      "metrics.json: bootstrap/metrics",
      "/tmp/m.json: bootstrap/metrics",
      /results file \/tmp\/m\.json leaves the results folder/,
    ],
  ])("%s is refused at its place", async (_, from, to, message) => {
    expect(fixture.pristine).toContain(from);
    p.write(SPEC, fixture.pristine.replace(from, to));
    try {
      const err = await refused(["build", SPEC]);
      expect(err).toMatch(/sums\.yaml:\d+:\d+: /);
      expect(err).toMatch(message);
    } finally {
      p.write(SPEC, fixture.pristine);
    }
  });

  it.each([
    [
      ["--refresh", "nosuchstage"],
      /--refresh nosuchstage: .*its stages: download, prompts, model, parse, score, bootstrap/,
    ],
    [["--subset="], /--subset "" names an empty subset/],
    [["--subset", "plain,,"], /--subset "plain,," names an empty subset/],
  ])("build %j is refused", async (args, message) => {
    expect(await refused(["build", SPEC, ...args])).toMatch(message);
  });

  it.each([
    ["medbench.lock", /-o medbench\.lock exists and is not a bundle: refusing to overwrite it/],
    ["nowhere/b.tar.gz", /-o nowhere\/b\.tar\.gz: the folder nowhere does not exist/],
    ["specs", /-o specs is a folder/],
  ])("export -o %s is refused", async (out, message) => {
    const lock = p.read("medbench.lock");
    const err = await refused(["export", RESULT, "-o", out]);
    expect(err).toMatch(message);
    expect(p.read("medbench.lock")).toBe(lock);
  });

  it("export -o keeps a gzip file it did not write (a backup), and replaces a bundle it wrote", async () => {
    const backup = gzipSync(Buffer.from("a user's backup, not a bundle\n"));
    p.write("backup.tar.gz", backup);
    const err = await refused(["export", RESULT, "-o", "backup.tar.gz"]);
    expect(err).toMatch(/-o backup\.tar\.gz exists and is not a bundle: refusing to overwrite it/);
    expect(readFileSync(p.path("backup.tar.gz")).equals(backup)).toBe(true);
    for (let i = 0; i < 2; i++) {
      const r = await p.run(["export", RESULT, "-o", "mine.tar.gz"]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
  });

  it("export -o - writes the bundle to stdout, and refuses --json beside it", async () => {
    const file = await p.run(["export", RESULT, "-o", "file.tar.gz"]);
    expect(file.exitCode, file.stderr).toBe(0);
    const piped = await execa("node", [BIN, "export", RESULT, "-o", "-"], {
      cwd: p.dir,
      reject: false,
      encoding: "buffer",
      env: { NO_COLOR: "1" },
    });
    expect(piped.exitCode, String(piped.stderr)).toBe(0);
    expect(Buffer.from(piped.stdout).equals(readFileSync(p.path("file.tar.gz")))).toBe(true);
    expect(p.exists("-")).toBe(false);
    const err = await refused(["export", RESULT, "-o", "-", "--json"]);
    expect(err).toMatch(/-o - writes the bundle to stdout, where --json would mix its object in/);
  });

  it("build's human output, the metrics table included, is on stdout", async () => {
    const r = await p.run(["build", SPEC]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/fresh\s+bootstrap/);
    expect(r.stdout).toMatch(/clopper-pearson/);
    expect(r.stdout).toMatch(/results: .*medbench_calculator/);
  });

  it("registry typos and wrong types are flagged at file:line:col with the known keys", async () => {
    p.write("reg.yaml", "routes:\n  x:\n    base_url: 42\n    concurency: 3\n    reqest: {}\n");
    const err = await refused(["build", SPEC, "--registry", "reg.yaml", "--model", "x/m"]);
    expect(err).toMatch(/reg\.yaml:4:5: routes\.x\.concurency: unknown key `concurency`/);
    expect(err).toMatch(/reg\.yaml:5:5: routes\.x\.reqest: unknown key `reqest`/);
    expect(err).toMatch(
      new RegExp(
        "known keys here: protocol, base_url, api_key_env, base_url_env, headers, concurrency, " +
          "timeout_s, retry,\\s*request, max_failures_in_a_row",
      ),
    );
    expect(err).toMatch(/reg\.yaml:3:15: routes\.x\.base_url: must be string, not a number/);
  });

  it("a --registry file is checked before anything runs, even for a built-in model", async () => {
    p.write("reg.yaml", "routes:\n  x:\n    base_ur: http://127.0.0.1:9\n");
    const err = await refused(["build", SPEC, "--registry", "reg.yaml"]);
    expect(err).toMatch(/reg\.yaml:3:5: routes\.x\.base_ur: unknown key `base_ur`/);
    const missing = await refused(["build", SPEC, "--registry", "no-such-routes.yaml"]);
    expect(missing).toMatch(/no-such-routes\.yaml: cannot read the route registry \(ENOENT\)/);
  });

  it("status, which sends nothing, needs no route for a spec whose default model names one", async () => {
    p.write(
      "specs/sums-route.yaml",
      fixture.pristine.replace("  model: medbench/calculator", "  model: acme/gpt-9"),
    );
    const status = await p.run(["status", "specs/sums-route.yaml"]);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/model/);
    const build = await refused(["build", "specs/sums-route.yaml"]);
    expect(build).toMatch(/no route acme in the registry/);
  });

  it("an unknown route or built-in model is refused at the spec's model, with what there is", async () => {
    const route = await refused(["build", SPEC, "--model", "nosuch/m"]);
    expect(route).toMatch(/sums\.yaml:\d+:\d+: .*no route nosuch in the registry .*variable `model`/);
    expect(route).toMatch(/use one of its routes \(local, /);
    const builtin = await refused(["build", SPEC, "--model", "medbench/abacus"]);
    expect(builtin).toMatch(/no built-in model medbench\/abacus for this task/);
    expect(builtin).toMatch(/use one of: medbench\/calculator, medbench\/constant/);
  });
});

describe("hardening: large inputs and closed pipes", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project(SUMS_SPECS);
  });
  afterAll(() => p.remove());

  it("a spec with 100,000 keys is hashed (the unique-key check is linear)", async () => {
    // The parser's own unique-key check is quadratic: this took ~170 s before, ~2 s now.
    const lines = ["spec:", "  task: big", "  big:"];
    for (let i = 0; i < 100_000; i++) lines.push(`    k${i}: ${i}`);
    p.write("big.yaml", lines.join("\n") + "\n");
    const r = await p.run(["hash", "big.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("status | head -c1 ends quietly (EPIPE on stdout)", async () => {
    const r = await execa(
      "bash",
      ["-c", `node ${BIN} status ${SPEC} | head -c1 >/dev/null; echo "\${PIPESTATUS[0]}"`],
      {
        cwd: p.dir,
        reject: false,
        env: { NO_COLOR: "1" },
      },
    );
    expect(r.stderr).not.toContain("EPIPE");
    expect(r.stderr).not.toMatch(NO_STACK);
    expect(r.stdout.trim()).toBe("0");
  });
});
