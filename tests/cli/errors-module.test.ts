// src/errors.ts: each failure the user can meet maps to one exit code, one stderr text and one --json
// object.
import { describe, expect, it } from "vitest";
import {
  BuildFailure,
  CommandFailure,
  DiagnosticError,
  reportedFailure,
  StageError,
  UsageError,
} from "../../src/errors.js";

const plain = (text: string) => text;
const red = (text: string) => `<red>${text}</red>`;

describe("reportedFailure", () => {
  it("a bad spec: exit 2, each diagnostic with its place, the others under `more`", () => {
    const failure = reportedFailure(
      new DiagnosticError([
        { file: "s.yaml", line: 3, column: 5, key: "stages.a", message: "bad kind", fix: "use one" },
        { file: "s.yaml", message: "second" },
      ]),
      "build",
      red,
    );
    expect(failure.exit).toBe(2);
    expect(failure.text).toBe(
      "<red>error:</red> s.yaml:3:5: stages.a: bad kind\n  fix: use one\n\n" +
        "<red>error:</red> s.yaml: second\n",
    );
    expect(failure.json).toEqual({
      code: "bad-spec",
      message: "stages.a: bad kind",
      fix: "use one",
      location: "s.yaml:3:5",
      exit: 2,
      more: [{ message: "second", fix: null, location: "s.yaml" }],
    });
  });

  it("bad usage: exit 2, the help's first paragraph dropped from the object", () => {
    const failure = reportedFailure(new UsageError("unknown command\n\nusage: …"), "frob", plain);
    expect(failure.exit).toBe(2);
    expect(failure.text).toBe("error: unknown command\n\nusage: …\n");
    expect(failure.json).toEqual({
      code: "bad-usage",
      message: "unknown command",
      fix: "medbench frob --help lists its arguments and options",
      location: null,
      exit: 2,
    });
  });

  it("a failed build: exit 1, nothing recorded; the stage named unless it is the lock or results", () => {
    const staged = reportedFailure(new BuildFailure("score", "it broke", "fix it"), "build", plain);
    expect(staged.exit).toBe(1);
    expect(staged.text).toBe(
      "error: stage score: it broke\n  fix: fix it\n" +
        "nothing was recorded: medbench.lock and earlier results are as they were\n",
    );
    expect(staged.json).toEqual({
      code: "build-failed",
      message: "it broke",
      fix: "fix it",
      location: "score",
      exit: 1,
    });
    expect(reportedFailure(new BuildFailure("lock", "held"), "build", plain).text).toMatch(/^error: held\n/);
  });

  it("a command that could not do its job, a full disk and a bug: exit 1", () => {
    const failed = reportedFailure(new CommandFailure("unreachable", "check the URL"), "cache", plain);
    expect([failed.exit, failed.json.code, failed.text]).toEqual([
      1,
      "failed",
      "error: unreachable\n  fix: check the URL\n",
    ]);
    const full = Object.assign(new Error("ENOSPC"), { code: "ENOSPC", path: "/tmp/x" });
    expect(reportedFailure(full, "build", plain).json).toMatchObject({
      code: "disk-full",
      location: "/tmp/x",
      exit: 1,
    });
    const bug = reportedFailure(new StageError("not caught"), "build", plain);
    expect([bug.exit, bug.json.code, bug.json.message]).toEqual([1, "internal", "not caught"]);
    expect(bug.text).toMatch(/^internal error \(a bug in medbench; please report it\):\n/);
  });
});
