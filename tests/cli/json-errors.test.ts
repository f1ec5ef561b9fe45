// With --json, a command that fails prints one JSON error object on stdout (code, message, fix,
// location, exit), so that a CI consumer has something to parse; stderr keeps the message for a person.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execa } from "execa";
import { expectCleanFailure, Project } from "../support/rig.js";

const SPEC = "specs/voice-command.yaml";

interface ErrorObject {
  code: string;
  message: string;
  fix: string | null;
  location: string | null;
  exit: number;
}

/** The one JSON object on stdout, and that it is an error object. */
function errorOf(stdout: string): ErrorObject {
  const lines = stdout.trim().split("\n");
  expect(lines.length, stdout).toBe(1);
  const v = JSON.parse(lines[0]!) as { error: ErrorObject };
  expect(Object.keys(v)).toEqual(["error"]);
  expect(typeof v.error.message).toBe("string");
  expect(v.error.message.length).toBeGreaterThan(0);
  return v.error;
}

describe("--json on failure", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project();
    p.write("bad.yaml", p.read(SPEC).replace("      level: 0.95\n", "      level: 2\n"));
  });
  afterAll(() => p.remove());

  // [command line, exit code, error code, the message, the location]
  const cases: [string[], number, string, RegExp, RegExp | null][] = [
    [["build", "--json"], 2, "bad-usage", /build takes one spec file/, null],
    [["build", "bad.yaml", "--json"], 2, "bad-spec", /level: 2 is out of range/, /^bad\.yaml:\d+:14$/],
    [["build", "specs/nope.yaml", "--json"], 2, "bad-spec", /no such file/, /^specs\/nope\.yaml$/],
    [
      ["build", SPEC, "--data-dir", "no-such-dir", "--json"],
      1,
      "build-failed",
      /no-such-dir cannot be read/,
      /^download$/,
    ],
    [["status", SPEC, "--frozen", "--json"], 2, "bad-usage", /status does not take --frozen/, null],
    [["hash", "nope.yaml", "--json"], 2, "bad-spec", /no such file/, /^nope\.yaml$/],
    [["diff", SPEC, "nope.yaml", "--json"], 2, "bad-spec", /no such file/, /^nope\.yaml$/],
    [["stats", "ci", "--value", "v", "--json"], 2, "bad-usage", /stats ci needs --input/, null],
    [["compare", "a", "b", "--json"], 2, "bad-usage", /^a is not a result directory/, null],
    [["export", "results/x", "--json"], 2, "bad-usage", /export takes a result directory and -o/, null],
    [["verify", "--json"], 2, "bad-usage", /verify takes one bundle/, null],
    [["report", "--json"], 2, "bad-usage", /report needs -o/, null],
    [["check", "nope.yaml", "--json"], 2, "bad-spec", /no such file/, /^nope\.yaml$/],
    [["cache", "frobnicate", "--json"], 2, "bad-usage", /unknown cache action "frobnicate"/, null],
  ];
  for (const [args, exit, code, message, location] of cases)
    it(`medbench ${args.join(" ")}`, async () => {
      const before = p.snapshot();
      const r = await p.run(args);
      expect(r.exitCode, r.stderr).toBe(exit);
      expectCleanFailure(r.stderr);
      expect(r.stderr).toContain("error:"); // the person's message is still there
      const e = errorOf(r.stdout);
      expect(e).toMatchObject({ code, exit });
      expect(e.message).toMatch(message);
      expect(e.message).not.toContain("usage:"); // the help text is for a person, not the object
      if (location) expect(e.location).toMatch(location);
      else expect(e.location).toBeNull();
      expect(e.fix === null || e.fix.length > 0).toBe(true);
      expect(p.snapshot()).toBe(before);
    });

  it("without --json a failure prints nothing on stdout", async () => {
    const r = await p.run(["build", "bad.yaml"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
  });

  it("a spec's several mistakes: the first is the object, the others follow in `more`", async () => {
    p.write(
      "two.yaml",
      p
        .read(SPEC)
        .replace("      level: 0.95\n", "      level: 2\n")
        .replace("      seed: 0\n", "      seed: -1\n"),
    );
    const r = await p.run(["build", "two.yaml", "--json"]);
    expect(r.exitCode).toBe(2);
    const e = errorOf(r.stdout) as ErrorObject & { more: { location: string }[] };
    expect(e.location).toMatch(/^two\.yaml:\d+:\d+$/);
    expect(e.more.length).toBeGreaterThan(0);
    expect(e.more[0]!.location).toMatch(/^two\.yaml:\d+:\d+$/);
  });
});

// The rule (README, "Commands"): a command that did its job prints its result, whose verdict is in it (exit
// 1 when the verdict is no); a command that could not do its job prints {"error": …} (exit 1 or 2).
describe("--json: a verdict is the result's, a failure is an error object", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    await p.buildSpec(SPEC);
    const exported = await p.run([
      "export",
      "results/kor-surgical-robot-voice-command/medbench_prior",
      "-o",
      "b.tar.gz",
    ]);
    expect(exported.exitCode, exported.stderr).toBe(0);
  });
  afterAll(() => p.remove());

  /** The one object on stdout, checked to be a result (no `error` member). */
  const resultOf = (stdout: string) => {
    const lines = stdout.trim().split("\n");
    const v = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    expect(v).not.toHaveProperty("error");
    return v;
  };

  it("verify, check and hash: exit 1 with the result, its verdict in it", async () => {
    await execa("mkdir", [p.path("b")]);
    await execa("tar", ["xzf", p.path("b.tar.gz"), "-C", p.path("b")]);
    p.edit("b/results/metrics.json", (t) => t.replace('"value": ', '"value": 0.5, "was": '));
    const verify = await p.run(["verify", "b", "--json"]);
    expect(verify.exitCode, verify.stderr).toBe(1);
    expect(resultOf(verify.stdout)).toMatchObject({ ok: false });
    const check = await p.run(["check", "specs/note-errors.yaml", "--json"]);
    expect(check.exitCode, check.stderr).toBe(1);
    expect(resultOf(check.stdout)).toMatchObject({ status: "incomplete" });
    p.write("doc.json", JSON.stringify({ spec_hash: "0".repeat(64), spec: { a: 1 } }));
    const hash = await p.run(["hash", "doc.json", "--json"]);
    expect(hash.exitCode, hash.stderr).toBe(1);
    expect(resultOf(hash.stdout)).toMatchObject({ matches: false });
  });

  it("build says whether it is complete; a remote that cannot be listed is an error object", async () => {
    expect(resultOf((await p.run(["build", SPEC, "--json"])).stdout)).toMatchObject({ complete: true });
    const gone = {
      MEDBENCH_REMOTE: "s3://medbench/x",
      MEDBENCH_REMOTE_ENDPOINT: "http://127.0.0.1:9", // nothing listens there
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "x",
    };
    const pull = await p.run(["cache", "pull", "--json"], gone);
    expect(pull.exitCode, pull.stderr).toBe(1);
    expect(errorOf(pull.stdout)).toMatchObject({ code: "failed", exit: 1 });
    expect(pull.stderr).toMatch(/error: cannot list s3:\/\/medbench\/x; nothing was copied\n {2}fix: /);
  });
});
