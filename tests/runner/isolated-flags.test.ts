// An isolated stage's process starts with Node's permission options only: a V8 flag on its command line
// would make Node compile every built-in the process loads without its code cache (about 11 ms a process,
// docs/performance.md "Task code isolated"); the process sets its V8 flag itself once they are loaded.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { permissionFlags } from "../../src/runner/code/isolation.js";

const NODE_OPTIONS = /^--(experimental-permission|disable-warning=|allow-fs-(read|write)=)/;

describe("an isolated stage's process", () => {
  it("starts with no V8 flag", () => {
    const flags = permissionFlags(["/a", "/b", "/a"], "/tmp/x");
    expect(flags.filter((flag) => !NODE_OPTIONS.test(flag))).toEqual([]);
    expect(flags.filter((flag) => flag.startsWith("--allow-fs-read="))).toHaveLength(2);
  });

  it("locks down and loads its stage kind as it starts, sets its budget after the task's modules", () => {
    const host = readFileSync(new URL("../../src/runner/code/isolated-host.ts", import.meta.url), "utf8");
    const body = host.slice(host.indexOf("function prepare()"));
    const order = [
      "lockDown()",
      "kindOf(module!",
      "const prepared = prepare()",
      "seedDraws(job.key)",
      "taskOf(job.task)",
      "optimiseLater()",
      "prepared.run(",
    ];
    const at = order.map((call) => body.indexOf(call));
    expect(at.every((index) => index > 0)).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
  });
});
