// What an isolated stage's process sends back is checked where it enters medbench's process
// (src/runner/code/isolation.ts): an output file it names must be one it wrote in its own folder, or
// medbench would move another file into the cache (an input's link in its inbox, a file of the project).
// The process here is a hostile host module, run with the same permission flags as the real one.
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startIsolated } from "../../src/runner/code/isolation.js";
import type { IsolatedJob } from "../../src/runner/code/isolation-job.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A host that answers its job with the output file `OUTPUT` (written first when it is in its folder). */
const HOST = `process.once("message", () => {
  const file = process.env.OUTPUT;
  if (process.env.WRITE) require("node:fs").writeFileSync(file, "made");
  const outputs = { rows: { file, sha256: "0".repeat(64) } };
  process.send({ type: "done", outputs }, undefined, {}, () => process.disconnect());
});`;

async function answered(output: (folder: string) => string, write: boolean) {
  const folder = mkdtempSync(join(tmpdir(), "medbench-outputs-"));
  folders.push(folder);
  const [inbox, tmp, host] = [join(folder, "in"), join(folder, "out"), join(folder, "host.cjs")];
  mkdirSync(inbox);
  mkdirSync(tmp);
  writeFileSync(host, HOST);
  const env: Record<string, string> = { OUTPUT: output(folder), ...(write ? { WRITE: "1" } : {}) };
  const started = startIsolated({ stage: "parse", reads: [host], inbox, tmp, env, host, args: [] });
  const hooks = { emit: () => {}, incomplete: () => {} };
  return started.run({} as IsolatedJob, hooks);
}

describe("an isolated process's output files", () => {
  it("are taken from its own folder", async () => {
    const outputs = await answered((folder) => join(folder, "out", "out-0"), true);
    expect(Object.keys(outputs)).toEqual(["rows"]);
  });

  it("are refused anywhere else: its inbox, the folder above, a path that climbs out", async () => {
    for (const name of ["in/0000", "host.cjs", "out/../host.cjs"]) {
      const outside = answered((folder) => `${folder}/${name}`, false);
      await expect(outside).rejects.toThrow(/stage parse's process gave .* outside the folder it writes/);
    }
    expect(folders.every((folder) => existsSync(join(folder, "host.cjs")))).toBe(true);
  });
});
