// The build as a user runs it: fresh and stale stages, what each kind of edit reruns, the lock, results.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { Project } from "./rig.js";

const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

describe("medbench build on the sample release", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project();
  });
  afterAll(() => p.remove());

  it("runs every stage once, then none", async () => {
    const first = await p.build();
    expect(first.status).toEqual({
      download: "ran",
      prompts: "ran",
      model: "ran",
      parse: "ran",
      score: "ran",
      bootstrap: "ran",
    });
    const second = await p.build();
    expect(Object.values(second.status).every((s) => s === "fresh")).toBe(true);
    expect(second.summary.stages.map((s) => s.key)).toEqual(first.summary.stages.map((s) => s.key));
  });

  it("writes a result that records the spec hash, the inputs and the request", async () => {
    const { summary } = await p.build();
    const m = JSON.parse(readFileSync(`${summary.results}/metrics.json`, "utf8"));
    expect(m.spec_hash).toBe("3bc7dc79688a46dc00af2790c9d049d196d1da86de20a637020129b5336e6551");
    expect(m.partial).toBe(false);
    expect(m.metrics.request).toEqual({ model: "medbench/prior", builtin: true });
    expect(m.metrics.exact_match.ci_method).toMatch(/bootstrap|clopper-pearson/);
    expect(m.inputs["benchmark/commands_v0.1.jsonl"]).toBe(
      sha(p.read("specs/voice-command/sample/benchmark/commands_v0.1.jsonl")),
    );
  });

  it("keeps medbench.lock byte-identical when nothing changed", async () => {
    const before = p.read("medbench.lock");
    const r = await p.build();
    expect(p.read("medbench.lock")).toBe(before);
    expect(new Set(Object.values(r.status))).toEqual(new Set(["fresh"]));
    const lock = JSON.parse(before);
    expect(lock.schema).toBe(2);
    expect(lock.hash_recipe).toBe(2);
    const builds = lock.specs["specs/voice-command.yaml"].builds;
    expect(Object.keys(builds)).toEqual(["limit=null model=medbench/prior subset=null"]);
    expect(Object.keys(builds["limit=null model=medbench/prior subset=null"].stages)).toEqual(
      ["bootstrap", "download", "model", "parse", "score", "prompts"].sort(),
    );
  });

  it("restores a results file edited in place, even with its size and mtime put back", async () => {
    const { summary } = await p.build();
    const file = `${summary.results}/items.jsonl`;
    const pristine = readFileSync(file);
    await new Promise((r) => setTimeout(r, 2100)); // past the stat cache's own-writes window
    await p.build(); // a no-op that records the results files in the stat cache
    const st = statSync(file);
    const damaged = Buffer.from(pristine);
    damaged[10] = damaged[10] === 0x30 ? 0x31 : 0x30; // same size
    writeFileSync(file, damaged);
    utimesSync(file, st.atime, st.mtime);
    const r = await p.build();
    expect(new Set(Object.values(r.status))).toEqual(new Set(["fresh"]));
    expect(readFileSync(file).equals(pristine)).toBe(true);
  });

  it("reruns only score and bootstrap when a score parameter changes, and says why in status", async () => {
    p.edit("specs/voice-command.yaml", (t) => t.replace("slot_compare: casefold", "slot_compare: exact"));
    const status = await p.run(["status", "specs/voice-command.yaml"]);
    expect(status.stdout).toMatch(/stale\s+score[\s\S]*params changed: slot_compare "casefold" -> "exact"/);
    expect(status.stdout).toMatch(/fresh\s+parse/);
    const r = await p.build();
    expect(r.status).toEqual({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
      score: "ran",
      bootstrap: "ran",
    });
    p.edit("specs/voice-command.yaml", (t) => t.replace("slot_compare: exact", "slot_compare: casefold"));
    expect(Object.values((await p.build()).status).every((s) => s === "fresh")).toBe(true); // the old keys are still cached
  });

  it("reruns everything downstream when a release file and its pin change", async () => {
    const file = "specs/voice-command/sample/benchmark/rules_v0.1.txt";
    const old = sha(p.read(file));
    p.edit(file, (t) => t + "14. 테스트용 규칙.\n");
    const fresh = sha(p.read(file));
    // The file changed but its pin did not: refused, with both hashes.
    const refused = await p.run(["build", "specs/voice-command.yaml"]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(`expected ${old}`);
    expect(refused.stderr).toContain(`actual   ${fresh}`);
    p.edit("specs/voice-command.yaml", (t) => t.replace(old, fresh));
    const status = await p.run(["status", "specs/voice-command.yaml"]);
    expect(status.stdout).toMatch(/stale\s+download[\s\S]*source changed: files.benchmark\/rules_v0.1.txt/);
    const r = await p.build();
    expect(r.status.download).toBe("ran");
    expect(r.status.prompts).toBe("ran");
    expect(r.status.model).toBe("ran");
  });

  it("writes partial runs apart and marks them", async () => {
    const r = await p.build(["--subset", "clean", "--limit", "3"]);
    expect(r.summary.results).toMatch(/\.partial$/);
    const m = JSON.parse(readFileSync(`${r.summary.results}/metrics.json`, "utf8"));
    expect(m.partial).toBe(true);
    const lines = (f: string) =>
      p.read(`specs/voice-command/sample/benchmark/${f}`).trim().split("\n").length;
    const all =
      lines("commands_v0.1.jsonl") +
      lines("commands_v0.1_asr_generic.jsonl") +
      lines("commands_v0.1_asr_kor_or_stt.jsonl") +
      lines("kor_overheard_v0.1.jsonl");
    expect(m.selection).toEqual({ subset: ["clean"], limit: 3, items: 3, of: all });
  });

  it("refuses to change the lock under --frozen", async () => {
    p.edit("specs/voice-command.yaml", (t) => t.replace("resamples: 1000", "resamples: 999"));
    const before = p.read("medbench.lock");
    const r = await p.run(["build", "specs/voice-command.yaml", "--frozen"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("medbench.lock would change");
    expect(p.read("medbench.lock")).toBe(before);
    p.edit("specs/voice-command.yaml", (t) => t.replace("resamples: 999", "resamples: 1000"));
  });
});

describe("two builds at once on one cache", () => {
  it("both succeed with the same results", async () => {
    const p = new Project();
    const [a, b] = await Promise.all([
      p.run(["build", "specs/voice-command.yaml", "--json"]),
      p.run(["build", "specs/voice-command.yaml", "--json"]),
    ]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(b.exitCode, b.stderr).toBe(0);
    const keys = (r: typeof a) =>
      JSON.parse(r.stdout.trim().split("\n").pop()!).stages.map((s: { key: string }) => s.key);
    expect(keys(a)).toEqual(keys(b));
    const again = await p.build();
    expect(Object.values(again.status).every((s) => s === "fresh")).toBe(true);
    // Another project builds byte-identical result files (no timestamps inside).
    const q = new Project();
    const other = await q.build();
    for (const f of ["metrics.json", "items.jsonl", "replies.jsonl", "requests.jsonl", "build.json"]) {
      expect(q.read(`${other.summary.results.slice(q.dir.length + 1)}/${f}`), f).toBe(
        p.read(`${again.summary.results.slice(p.dir.length + 1)}/${f}`),
      );
    }
    q.remove();
    p.remove();
  });
});
