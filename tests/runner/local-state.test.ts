// Local state checked before it is used: an edited parsed-spec cache entry is discarded (the spec
// parsed again), a results file that is not what its build wrote is never ranked, compared or counted in a
// check (named as modified since build), and a lock of the wrong shape is refused before anything runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { Project, expectCleanFailure } from "../support/rig.js";

const TASK = "results/kor-surgical-robot-voice-command";
const PRIOR = `${TASK}/medbench_prior`;
const STOP = `${TASK}/medbench_keyword-stop`;
const NE_PRIOR = "results/syn-snuh-note-errors/medbench_prior/neutral-greedy";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("local state checked before use (25.2)", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    await p.build(["--model", "medbench/keyword-stop"]);
    const ne = await p.run(["build", "specs/note-errors.yaml", "--model", "medbench/prior", "--quiet"]);
    expect(ne.exitCode, ne.stderr).toBe(0);
  });
  afterAll(() => p?.remove());

  /** Runs `f` with a file edited by `edit`, then puts its bytes back. */
  async function withEdit<T>(file: string, edit: (t: string) => string, f: () => Promise<T>): Promise<T> {
    const before = p.read(file);
    const after = edit(before);
    expect(after, `the edit of ${file} applies`).not.toBe(before);
    p.write(file, after);
    try {
      return await f();
    } finally {
      p.write(file, before);
    }
  }

  it("an edited parsed-spec cache entry is discarded with a warning, the spec reparsed", async () => {
    const metrics = p.read(`${PRIOR}/metrics.json`);
    const entries = readdirSync(p.path("cache/specs"));
    expect(entries.length).toBeGreaterThan(0);
    let edited = 0;
    for (const e of entries)
      if (p.read(`cache/specs/${e}`).includes('"resamples":1000')) {
        p.edit(`cache/specs/${e}`, (t) => t.replace('"resamples":1000', '"resamples":7'));
        edited++;
      }
    expect(edited).toBe(1);
    const b = await p.build(["--refresh", "bootstrap"]);
    // Built from the spec (1000 resamples), so the bootstrap's output is the one it was.
    expect(p.read(`${PRIOR}/metrics.json`)).toBe(metrics);
    expect(b.run.stderr).toMatch(/warning: the parsed-spec cache entry .*cache\/specs\/.* is discarded/);
    expect(JSON.parse(metrics).metrics.exact_match.resamples).toBe(1000);
    const status = await p.run(["status", "specs/voice-command.yaml"]);
    expect(status.stdout).not.toMatch(/stale/);
    // The entry was written again, whole: the next build reads it without a warning.
    const again = await p.build();
    expect(again.run.stderr).not.toMatch(/warning/);
  });

  it("compare refuses a run whose items.jsonl was edited, naming the file", async () => {
    const flip = (t: string) => {
      let n = 0;
      return t
        .split("\n")
        .map((l) =>
          n < 20 && l.includes('"subset":"clean"') && l.includes('"exact":false')
            ? (n++, l.replace('"exact":false', '"exact":true'))
            : l,
        )
        .join("\n");
    };
    const clean = await p.run(["compare", STOP, PRIOR, "--json"]);
    expect(clean.exitCode, clean.stderr).toBe(0);
    await withEdit(`${PRIOR}/items.jsonl`, flip, async () => {
      const r = await p.run(["compare", STOP, PRIOR]);
      expect(r.exitCode).toBe(2);
      expectCleanFailure(r.stderr);
      expect(r.stderr).toContain(`${PRIOR} is modified since build (items.jsonl hashes to`);
      expect(r.stdout).toBe("");
    });
    // The same bytes put back: compared again, with the figures it had.
    const back = await p.run(["compare", STOP, PRIOR, "--json"]);
    expect(back.stdout).toBe(clean.stdout);
  });

  it("report lists a run whose metrics.json was edited apart, and never ranks it", async () => {
    const edit = (t: string) => {
      const m = JSON.parse(t);
      m.metrics.exact_match.value = 0.999;
      return JSON.stringify(m, null, 2);
    };
    await withEdit(`${PRIOR}/metrics.json`, edit, async () => {
      const r = await p.run(["report", "specs/voice-command.yaml", "-o", "r.html", "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const data = JSON.parse(
        /<script id="data" type="application\/json">(.*?)<\/script>/s.exec(p.read("r.html"))![1]!,
      ) as { leaderboard: { model: string; value: number }[]; modified: { dir: string }[] }[];
      expect(data[0]!.leaderboard.map((row) => row.model)).toEqual(["medbench/keyword-stop"]);
      expect(data[0]!.leaderboard.some((row) => row.value === 0.999)).toBe(false);
      const out = JSON.parse(r.stdout) as { runs: number; modified: string[] };
      expect(out.modified).toEqual([
        expect.stringMatching(/^results\/.*medbench_prior: metrics\.json hashes/),
      ]);
      expect(data[0]!.modified.map((m) => m.dir)).toEqual([PRIOR]);
      const text = await p.run(["report", "specs/voice-command.yaml", "-o", "r.html"]);
      expect(text.stderr).toContain(
        `warning: run modified since build, listed apart and not ranked: ${PRIOR}`,
      );
    });
  });

  it("check counts no edited run: it is missing and named, even with build.json made to match", async () => {
    const bcr = (t: string) => {
      const m = JSON.parse(t);
      m.metrics.bcr.value = 0.999;
      return JSON.stringify(m, null, 2);
    };
    const prior = async () => {
      const r = await p.run(["check", "specs/note-errors.yaml", "--json"]);
      const out = JSON.parse(r.stdout) as {
        runs: { role: string; status: string; value: number | null; reason: string | null }[];
        modified: { dir: string; why: string }[];
      };
      return { exit: r.exitCode, run: out.runs.find((x) => x.role === "prior")!, modified: out.modified };
    };
    const before = await prior();
    expect(before.run.status).toBe("ok");
    const metricsFile = `${NE_PRIOR}/metrics.json`;
    await withEdit(metricsFile, bcr, async () => {
      const after = await prior();
      expect(after.exit).toBe(1);
      expect(after.run).toMatchObject({ status: "missing", value: null });
      expect(after.run.reason).toContain(`${NE_PRIOR} is modified since build (metrics.json hashes to`);
      expect(before.modified).toEqual([]);
      expect(after.modified.map((m) => m.dir)).toEqual([NE_PRIOR]);
      // build.json made to record the edited file's hash: the cache's record of the stage still disagrees.
      const edited = sha256(p.read(metricsFile));
      const recorded = JSON.parse(p.read(`${NE_PRIOR}/build.json`)).stages.bootstrap.outputs.metrics;
      await withEdit(
        `${NE_PRIOR}/build.json`,
        (t) => t.replace(recorded, edited),
        async () => {
          const forged = await prior();
          expect(forged.run).toMatchObject({ status: "missing", value: null });
          expect(forged.run.reason).toMatch(
            /build\.json records bootstrap\/metrics as .*the cache's record/,
          );
        },
      );
      const text = await p.run(["check", "specs/note-errors.yaml"]);
      expect(text.stdout).toContain(`modified since build, not counted ${NE_PRIOR}`);
    });
    expect(await prior()).toEqual(before);
  });

  it("an edited stat cache is dropped: a results file it was made to vouch for is rewritten", async () => {
    const file = p.path(`${PRIOR}/metrics.json`);
    const built = p.read(`${PRIOR}/metrics.json`);
    // A build after the settling time records the results file in the stat cache.
    await new Promise((r) => setTimeout(r, 2200));
    await p.build();
    p.edit(`${PRIOR}/metrics.json`, (t) => t.replace(/"value": [0-9.]+/, '"value": 0.999'));
    // Its entry given the edited file's stat and the built file's sha256 (the seal line, if any, kept).
    const text = p.read("cache/stat-cache.json");
    const at = text.startsWith("medbench-sealed") ? text.indexOf("\n") + 1 : 0;
    const stat = JSON.parse(text.slice(at)) as { entries: Record<string, Record<string, unknown>> };
    const entry = stat.entries[file]!;
    expect(entry.sha256).toBe(sha256(built));
    const st = statSync(file);
    Object.assign(entry, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino });
    p.write("cache/stat-cache.json", text.slice(0, at) + JSON.stringify(stat));
    const b = await p.build();
    expect(p.read(`${PRIOR}/metrics.json`)).toBe(built);
    expect(b.run.stderr).toMatch(/warning: .*stat-cache\.json is discarded/);
  });
});

describe("a lock of the wrong shape (25.2)", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    await p.build();
  });
  afterAll(() => p?.remove());

  it.each([
    [
      "specs is a string",
      (l: Record<string, unknown>) => void (l.specs = "specs/voice-command.yaml"),
      "/specs",
    ],
    [
      "a stage's outputs are a list",
      (l: Record<string, unknown>) => {
        const spec = (
          l.specs as Record<string, { builds: Record<string, { stages: Record<string, unknown> }> }>
        )["specs/voice-command.yaml"]!;
        const build = Object.values(spec.builds)[0]!;
        (build.stages.model as { outputs: unknown }).outputs = ["replies"];
      },
      "/specs/specs~1voice-command.yaml/builds/",
    ],
  ])("%s: refused when the lock is read, the lock untouched", async (_, edit, pointer) => {
    const lock = p.read("medbench.lock");
    const parsed = JSON.parse(lock) as Record<string, unknown>;
    edit(parsed);
    const bad = JSON.stringify(parsed, null, 2);
    p.write("medbench.lock", bad);
    try {
      const r = await p.run(["build", "specs/voice-command.yaml"]);
      expect(r.exitCode).toBe(2);
      expectCleanFailure(r.stderr);
      expect(r.stderr).toContain(`its member ${pointer}`);
      expect(r.stderr).toContain("mv medbench.lock medbench.lock.old");
      expect(r.stderr).not.toMatch(/fresh/); // refused before any stage, not after every one
      expect(p.read("medbench.lock")).toBe(bad);
    } finally {
      p.write("medbench.lock", lock);
    }
  });
});
