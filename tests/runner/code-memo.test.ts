// The code memo (src/hash/code-memo.ts) spares a no-op build rereading and rehashing medbench's code, by
// stat signature. It must never let an edited file pass as the one remembered: an edit that keeps the size
// and puts the mtime back still changes the ctime, so the file is read again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { Install, Project, SUMS_SPECS } from "../support/rig.js";
import { age } from "../support/helpers.js";

const SPEC = "specs/sums.yaml";
const COMPILED_SCORER = "dist/tests/fixtures/sums/task/scorer.js";
const SOURCE_SCORER = "tests/fixtures/sums/task/scorer.ts";
const HOUR_AGO = new Date(Date.now() - 3600_000);

/** Replaces `from` by `to` (same length), then puts the file's mtime back: only its ctime tells. */
function editKeepingStat(file: string, from: string, to: string): void {
  expect(to.length).toBe(from.length);
  const before = statSync(file);
  const text = readFileSync(file, "utf8");
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
  utimesSync(file, before.atime, before.mtime);
  expect(statSync(file).size).toBe(before.size);
  expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
}

/** A sealed cache file's seal line (src/hash/sealed.ts; "" for a file of the older format) and JSON text. */
const sealLine = (text: string) =>
  text.startsWith("medbench-sealed") ? text.slice(0, text.indexOf("\n") + 1) : "";
const sealedBody = (text: string) => text.slice(sealLine(text).length);
const labelOf = (p: Project) =>
  JSON.parse(p.read("results/fixture-sums/medbench_calculator/metrics.json")).metrics.accuracy.label;

describe("the code memo", () => {
  let install: Install;
  let p: Project;
  beforeAll(async () => {
    install = new Install();
    for (const d of ["dist", "src", "stages", "tasks", "tests", "package-lock.json"]) {
      const path = install.path(d);
      if (statSync(path).isDirectory()) age(path, HOUR_AGO);
      else utimesSync(path, HOUR_AGO, HOUR_AGO);
    }
    // utimes sets the ctime to now: past the memo's 2 s margin, the stats are trusted (a margin, not a
    // race).
    await new Promise((r) => setTimeout(r, 2200));
    p = new Project(SUMS_SPECS);
    await p.buildSpec(SPEC, [], {}, install.bin);
  });
  afterAll(() => {
    install.remove();
    p.remove();
  });

  it("remembers the install's code in the project cache; the next build is fresh", async () => {
    const memo = JSON.parse(sealedBody(p.read("cache/code-memo.json"))) as {
      entries: Record<string, unknown>;
    };
    expect(Object.keys(memo.entries)).toContain(install.path(COMPILED_SCORER));
    // A source is remembered per derivation: its sha256 (checkCompiled) and its task rules apart.
    expect(Object.keys(memo.entries)).toContain(`${install.path(SOURCE_SCORER)}\nsha256`);
    expect(Object.keys(memo.entries)).toContain(`${install.path(SOURCE_SCORER)}\ntask-rules`);
    const again = await p.buildSpec(SPEC, [], {}, install.bin);
    expect(new Set(Object.values(again.status))).toEqual(new Set(["fresh"]));
  });

  it("a compiled module edited with its size and mtime kept reruns what calls it", async () => {
    editKeepingStat(install.path(COMPILED_SCORER), '"correct sums"', '"CORRECT SUMS"');
    const built = await p.buildSpec(SPEC, [], {}, install.bin);
    expect(built.status.score).toBe("ran");
    expect(labelOf(p)).toBe("CORRECT SUMS");
  });

  it("a source edited with its size and mtime kept is refused as not compiled", async () => {
    editKeepingStat(install.path(SOURCE_SCORER), '"correct sums"', '"CORRECT SUMS"');
    const before = p.snapshot();
    const r = await p.run(["build", SPEC], {}, install.bin);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${SOURCE_SCORER}: this source changed since dist/ was compiled`);
    expect(p.snapshot()).toBe(before);
  });

  it("a damaged memo costs a reread, nothing else", async () => {
    editKeepingStat(install.path(SOURCE_SCORER), '"CORRECT SUMS"', '"correct sums"');
    editKeepingStat(install.path(COMPILED_SCORER), '"CORRECT SUMS"', '"correct sums"');
    await p.buildSpec(SPEC, [], {}, install.bin);
    expect(labelOf(p)).toBe("correct sums");
    p.write("cache/code-memo.json", "{ not json");
    const again = await p.buildSpec(SPEC, [], {}, install.bin);
    expect(new Set(Object.values(again.status))).toEqual(new Set(["fresh"]));
    expect(labelOf(p)).toBe("correct sums");
    const memo = JSON.parse(sealedBody(p.read("cache/code-memo.json")));
    expect(memo.version).toBe(3);
    expect(Object.keys(memo.entries)).toContain(install.path("dist/stages/score.js"));
  });

  it("an edited memo is dropped whole: an entry made to vouch for edited code is not believed", async () => {
    // A build after the settling time remembers the compiled scorer.
    await new Promise((r) => setTimeout(r, 2200));
    const before = await p.buildSpec(SPEC, [], {}, install.bin);
    expect(labelOf(p)).toBe("correct sums");
    const scorer = install.path(COMPILED_SCORER);
    editKeepingStat(scorer, '"correct sums"', '"CORRECT SUMS"');
    // Its entry given the edited file's stat, its facts (the sha256 of the code before) kept.
    const text = p.read("cache/code-memo.json");
    const memo = JSON.parse(sealedBody(text)) as { entries: Record<string, Record<string, unknown>> };
    const st = statSync(scorer);
    expect(memo.entries[scorer]).toBeDefined();
    Object.assign(memo.entries[scorer]!, {
      size: st.size,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      ino: st.ino,
    });
    p.write("cache/code-memo.json", sealLine(text) + JSON.stringify(memo));
    const built = await p.buildSpec(SPEC, [], {}, install.bin);
    // Keyed by the code as it is (an earlier test built this code, so its score may come from the cache).
    expect(labelOf(p)).toBe("CORRECT SUMS");
    expect(built.summary.stages.find((s) => s.name === "score")!.key).not.toBe(
      before.summary.stages.find((s) => s.name === "score")!.key,
    );
    expect(built.run.stderr).toMatch(/warning: .*code-memo\.json is discarded/);
  });
});
