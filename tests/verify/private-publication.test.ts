// Publication of a private task (note-errors): a partial run holds a few private items, so no hash of it may
// reach the committed medbench.lock or a bundle; and a private bundle's verdicts, taken as it records them
// (its replies are withheld), verify only against the very code that made them (docs/verify.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { Install, Project, BIN } from "../support/rig.js";

const SPEC = "specs/note-errors.yaml";
const RESULT = "results/syn-snuh-note-errors/medbench_prior/neutral-greedy";

describe("a partial run of a private release", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project();
  });
  afterAll(() => p.remove());

  it("is not recorded in medbench.lock, is refused under --frozen, and is never exported", async () => {
    await p.buildSpec(SPEC);
    const lock = p.read("medbench.lock");
    const r = await p.run(["build", SPEC, "--limit", "1"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /a partial run of a task whose release is private is not recorded in medbench\.lock/,
    );
    expect(p.read("medbench.lock")).toBe(lock);
    // No hash the partial build made (its requests of one pair, every key after them) is in the lock, and
    // its build.json records no key and no output but its results files'.
    const built = JSON.parse(p.read(`${RESULT}.partial/build.json`)) as {
      stages: Record<string, { key?: string; outputs: Record<string, string> }>;
      results: Record<string, string>;
    };
    const full = JSON.parse(p.read(`${RESULT}/build.json`)) as typeof built;
    const fullHashes = new Set(
      Object.values(full.stages).flatMap((st) => [st.key, ...Object.values(st.outputs)]),
    );
    const manifests = readdirSync(p.path("cache/stages")).map(
      (f) => JSON.parse(p.read(`cache/stages/${f}`)) as { key: string; outputs: Record<string, string> },
    );
    const partialOnly = manifests
      .flatMap((m) => [m.key, ...Object.values(m.outputs)])
      .filter((h) => !fullHashes.has(h));
    expect(partialOnly.length).toBeGreaterThan(0);
    for (const hash of partialOnly) expect(lock).not.toContain(hash);
    for (const st of Object.values(built.stages)) expect(st.key).toBeUndefined();
    const recorded = Object.entries(built.stages).flatMap(([name, st]) =>
      Object.keys(st.outputs).map((output) => `${name}/${output}`),
    );
    expect(recorded.sort()).toEqual([...new Set(Object.values(built.results))].sort());
    expect(recorded).not.toContain("prompts/requests");
    // What it does record still proves its results files, and a status after it finds them fresh.
    const status = await p.run(["status", SPEC, "--limit", "1"]);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).not.toMatch(/stale/);

    const frozen = await p.run(["build", SPEC, "--limit", "1", "--frozen"]);
    expect(frozen.exitCode, frozen.stderr).toBe(1);
    expect(frozen.stderr).toMatch(/--frozen checks a build against medbench\.lock, and a partial run/);

    const ex = await p.run(["export", `${RESULT}.partial`, "-o", "partial.tar.gz"]);
    expect(ex.exitCode, ex.stderr).toBe(2);
    expect(ex.stderr).toMatch(/is a partial run \(--limit or --subset\) of a task whose release is private/);
    expect(p.exists("partial.tar.gz")).toBe(false);
  });
});

describe("a private bundle's verdicts", () => {
  let p: Project;
  let other: Install;
  beforeAll(async () => {
    p = new Project();
    other = new Install();
    // Another parser: the verdicts it makes are not what this medbench's parser makes of the same replies.
    other.edit("tasks/note-errors/verdict.ts", (t) => `${t}\nexport const edited = true;\n`);
    await other.compile();
  });
  afterAll(() => {
    p.remove();
    other.remove();
  });

  it("made by other code than the verifier's do not verify; made by the same code, they do", async () => {
    await p.buildSpec(SPEC, [], {}, other.bin);
    const ex = await p.run(["export", RESULT, "-o", "other.tar.gz"], {}, other.bin);
    expect(ex.exitCode, ex.stderr).toBe(0);
    const here = await p.run(["verify", "other.tar.gz"], {}, BIN);
    expect(here.exitCode, here.stdout).toBe(1);
    expect(here.stdout).toMatch(
      "FAIL verdicts: not verifiable: fit, parse, score, " +
        "validation_parse, validation_score are taken as the bundle records",
    );
    expect(here.stdout).toMatch(/parse: .*tasks\/note-errors\/verdict\.ts/);
    expect(here.stdout).not.toContain("verified: the published result is reproduced");
    const same = await p.run(["verify", "other.tar.gz"], {}, other.bin);
    expect(same.exitCode, same.stdout).toBe(0);
    expect(same.stdout).toMatch(/verdicts: taken as the bundle records them .* made by the same code/);
  });
});
