// The build as a user runs it, on the fixture task (tests/fixtures/README.md): the lock, the result's
// records, results files put back, a release file and its pin, partial runs, two builds at once. What each
// spec edit reruns and --frozen: tests/runner/runner-fixture.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { basename, dirname, join } from "node:path";
import { Project, SUMS_SPECS } from "../support/rig.js";

const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");
const SPEC = "specs/sums.yaml";
const SAMPLE = "specs/sums/sample/items.jsonl";
const BUILD = "limit=null model=medbench/calculator subset=null";

describe("medbench build on the sample release", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project(SUMS_SPECS);
    await p.buildSpec(SPEC);
  });
  afterAll(() => p.remove());

  it("writes a result that records the spec hash, the inputs and the request", async () => {
    const { summary } = await p.buildSpec(SPEC);
    const m = JSON.parse(readFileSync(`${summary.results}/metrics.json`, "utf8"));
    const hashed = await p.run(["hash", SPEC]);
    expect(hashed.exitCode, hashed.stderr).toBe(0);
    expect(m.spec_hash).toBe(hashed.stdout.trim());
    expect(m.spec_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(m.partial).toBe(false);
    expect(m.metrics.request).toEqual({ model: "medbench/calculator", builtin: true });
    expect(m.metrics.accuracy.ci_method).toMatch(/bootstrap|clopper-pearson/);
    expect(m.inputs["items.jsonl"]).toBe(sha(p.read(SAMPLE)));
  });

  it("sweeps the folders a killed build left beside its results, and only those", async () => {
    const { summary } = await p.buildSpec(SPEC);
    const parent = dirname(summary.results),
      name = basename(summary.results);
    const dead = spawnSync("node", ["-e", "0"]).pid!; // a pid that has exited
    const left = [`.${name}.tmp-${dead}-ab12`, `.${name}.old-${dead}-cd34`];
    const kept = [
      `.${name}.tmp-${process.pid}-ef56`,
      `.x${name}.tmp-${dead}-gh78`,
      `.${name}.tmp-x-${dead}`,
    ];
    for (const n of [...left, ...kept]) mkdirSync(join(parent, n));
    rmSync(summary.results, { recursive: true }); // the next build writes the results folder again
    await p.buildSpec(SPEC);
    const now = readdirSync(parent);
    for (const n of left) expect(now).not.toContain(n);
    for (const n of kept) expect(now).toContain(n); // a live build's, or not a leftover's name
    for (const n of kept) rmSync(join(parent, n), { recursive: true });
  });

  it("keeps medbench.lock byte-identical when nothing changed", async () => {
    const before = p.read("medbench.lock");
    const r = await p.buildSpec(SPEC);
    expect(p.read("medbench.lock")).toBe(before);
    expect(new Set(Object.values(r.status))).toEqual(new Set(["fresh"]));
    const lock = JSON.parse(before);
    expect(lock.schema).toBe(2);
    expect(lock.hash_recipe).toBe(2);
    const builds = lock.specs[SPEC].builds;
    expect(Object.keys(builds)).toEqual([BUILD]);
    expect(Object.keys(builds[BUILD].stages)).toEqual(
      ["bootstrap", "download", "model", "parse", "score", "prompts"].sort(),
    );
  });

  it("restores a results file edited in place, even with its size and mtime put back", async () => {
    const { summary } = await p.buildSpec(SPEC);
    const file = `${summary.results}/items.jsonl`;
    const pristine = readFileSync(file);
    await new Promise((r) => setTimeout(r, 2100)); // past the stat cache's own-writes window
    await p.buildSpec(SPEC); // a no-op that records the results files in the stat cache
    const st = statSync(file);
    const damaged = Buffer.from(pristine);
    damaged[10] = damaged[10] === 0x30 ? 0x31 : 0x30; // same size
    writeFileSync(file, damaged);
    utimesSync(file, st.atime, st.mtime);
    const r = await p.buildSpec(SPEC);
    expect(new Set(Object.values(r.status))).toEqual(new Set(["fresh"]));
    expect(readFileSync(file).equals(pristine)).toBe(true);
  });

  it("reruns everything downstream when a release file and its pin change", async () => {
    const old = sha(p.read(SAMPLE));
    p.edit(SAMPLE, (t) => t + '{"id": "q7", "unit": "u4", "subset": "hard", "a": 3, "b": 9}\n');
    const fresh = sha(p.read(SAMPLE));
    // The file changed but its pin did not: refused, with both hashes.
    const refused = await p.run(["build", SPEC]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(`expected ${old}`);
    expect(refused.stderr).toContain(`actual   ${fresh}`);
    p.edit(SPEC, (t) => t.replace(old, fresh));
    const status = await p.run(["status", SPEC]);
    expect(status.stdout).toMatch(/stale\s+download[\s\S]*source changed: files.items.jsonl/);
    const r = await p.buildSpec(SPEC);
    expect(r.status.download).toBe("ran");
    expect(r.status.prompts).toBe("ran");
    expect(r.status.model).toBe("ran");
  });

  it("writes partial runs apart and marks them; --limit takes whole units", async () => {
    const r = await p.buildSpec(SPEC, ["--subset", "plain", "--limit", "1"]);
    expect(r.summary.results).toMatch(/\.partial$/);
    const m = JSON.parse(readFileSync(`${r.summary.results}/metrics.json`, "utf8"));
    expect(m.partial).toBe(true);
    const rows = p
      .read(SAMPLE)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { unit: string; subset: string });
    const firstUnit = rows.filter((x) => x.subset === "plain" && x.unit === rows[0]!.unit).length;
    expect(firstUnit).toBeGreaterThan(1);
    expect(m.selection).toEqual({ subset: ["plain"], limit: 1, items: firstUnit, of: rows.length });
  });
});

describe("two builds at once on one cache", () => {
  it("both succeed with the same results", async () => {
    const p = new Project(SUMS_SPECS);
    const [a, b] = await Promise.all([p.buildSpec(SPEC), p.buildSpec(SPEC)]); // each throws on a failure
    const keys = (r: typeof a) => r.summary.stages.map((s) => s.key);
    expect(keys(a)).toEqual(keys(b));
    const again = await p.buildSpec(SPEC);
    expect(Object.values(again.status).every((s) => s === "fresh")).toBe(true);
    // Another project builds byte-identical result files (no timestamps inside).
    const q = new Project(SUMS_SPECS);
    const other = await q.buildSpec(SPEC);
    for (const f of ["metrics.json", "items.jsonl", "replies.jsonl", "units.jsonl", "build.json"]) {
      expect(q.read(`${other.summary.results.slice(q.dir.length + 1)}/${f}`), f).toBe(
        p.read(`${again.summary.results.slice(p.dir.length + 1)}/${f}`),
      );
    }
    q.remove();
    p.remove();
  });
});
