// The keyed walk as data (src/runner/execution/walk.ts), on the fixture task tests/fixtures/sums: what it
// yields for a stage never built, fresh, and stale with the reason; how a held stage makes its readers wait
// (what a --shard build leaves to a later build); and the --frozen and --shard policies
// (src/runner/execution/policy.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project, SUMS_SPECS } from "../support/rig.js";
import { loadRuntime } from "../../src/load/runtime.js";
import { buildOptions } from "../../src/cli/options.js";
import { build } from "../../src/runner/execution/executor.js";
import { Cache } from "../../src/runner/store/cache.js";
import { readLock, buildId } from "../../src/runner/results/lock.js";
import { newScope, projectSource, type BuildOptions } from "../../src/runner/execution/scope.js";
import { KeyedWalk, type WalkedStage, type Wording } from "../../src/runner/execution/walk.js";
import { frozenPolicy, shardPolicy } from "../../src/runner/execution/policy.js";
import { BuildFailure, StageError } from "../../src/errors.js";

const SPEC = "specs/sums.yaml";

describe("the keyed walk", () => {
  let project: Project;
  let opts: BuildOptions;
  beforeAll(() => {
    project = new Project(SUMS_SPECS);
    opts = { ...buildOptions({ project: project.dir }).opts, env: {} };
  });
  afterAll(() => project.remove());

  const runtime = () => loadRuntime(project.path(SPEC), {}, opts.project.cacheDir);

  /** Every stage as the walk yields it, nothing settled but what is fresh (as status walks). */
  async function walked(wording: Wording = "status", hold?: string): Promise<Map<string, WalkedStage>> {
    const rt = await runtime();
    const previous = readLock(opts.project.lockPath).specs[SPEC];
    const cache = new Cache(opts.project.cacheDir);
    const walk = new KeyedWalk(projectSource(newScope(rt, opts, cache, previous)), {
      cache,
      locked: previous?.builds[buildId(rt.spec.variables)],
      wording,
    });
    const stages = new Map<string, WalkedStage>();
    for await (const stage of walk.stages()) {
      stages.set(stage.decl.name, stage);
      if (stage.decl.name === hold) walk.hold(hold);
    }
    return stages;
  }

  it("yields a stage never built as missing, and its readers as waiting for it", async () => {
    const stages = await walked();
    const download = stages.get("download")!;
    expect(download.freshness).toBe("missing");
    expect(download.keyed?.key).toMatch(/^[0-9a-f]{64}$/);
    expect(download.keyed?.fresh).toBeNull();
    expect(download.reasons).toEqual(["never built"]);
    const prompts = stages.get("prompts")!;
    expect(prompts).toMatchObject({ freshness: "missing", keyed: null, waitingOn: ["download"] });
    expect(prompts.reasons).toEqual(["its input from stage download may change (that stage runs first)"]);
  });

  it("yields every stage fresh after a build, with the key and outputs the build recorded", async () => {
    const report = await build(await runtime(), opts, () => {});
    const stages = await walked();
    for (const stage of report.stages) {
      const walkedStage = stages.get(stage.name)!;
      expect(walkedStage.freshness, stage.name).toBe("fresh");
      expect(walkedStage.reasons).toEqual([]);
      expect(walkedStage.keyed?.key).toBe(stage.key);
      expect(walkedStage.keyed?.fresh?.outputs).toEqual(report.outputs[stage.name]);
    }
  });

  it("yields a stage whose parameter changed as stale, with the change as its reason", async () => {
    project.edit(SPEC, (text) => text.replace("tolerance: 0", "tolerance: 1"));
    try {
      const stages = await walked();
      expect(stages.get("parse")!.freshness).toBe("fresh");
      expect(stages.get("score")).toMatchObject({
        freshness: "stale",
        reasons: ["params changed: tolerance 0 -> 1"],
      });
      expect(stages.get("bootstrap")).toMatchObject({
        freshness: "stale",
        keyed: null,
        waitingOn: ["score"],
      });
      // A build words why it runs the stage, from the same facts.
      expect((await walked("build")).get("score")!.reasons).toEqual(["params changed: tolerance 0 -> 1"]);
    } finally {
      project.edit(SPEC, (text) => text.replace("tolerance: 1", "tolerance: 0"));
    }
  });

  it("holds a stage's readers back when asked (a shard's incomplete stage), settled or not", async () => {
    const stages = await walked("build", "model");
    expect(stages.get("model")!.freshness).toBe("fresh");
    expect(stages.get("parse")).toMatchObject({ keyed: null, waitingOn: ["model"] });
  });

  it("refuses a --frozen build whose stage key changed before that stage runs", async () => {
    project.edit(SPEC, (text) => text.replace("tolerance: 0", "tolerance: 1"));
    try {
      const events: string[] = [];
      const refused = build(await runtime(), { ...opts, frozen: true }, (event) => events.push(event.type));
      await expect(refused).rejects.toThrow(/medbench.lock would change \(stage score: its key differs/);
      expect(events).not.toContain("stage-start");
      expect(events.at(-1)).toBe("stage-failed");
    } finally {
      project.edit(SPEC, (text) => text.replace("tolerance: 1", "tolerance: 0"));
    }
  });
});

describe("the --frozen policy", () => {
  const locked = { variables: {}, stages: { score: { kind: "score", key: "k1", outputs: {} } } };
  const facts = { specPath: "specs/a.yaml", variableSet: "model=m", locked, unrecorded: null };
  const lock = { schema: 2, hash_recipe: 2, specs: {} };

  it("changes nothing without --frozen", () => {
    const policy = frozenPolicy(false, { ...facts, locked: undefined, unrecorded: "private" });
    expect(() => policy.start()).not.toThrow();
    expect(() => policy.stage("score", "k2", true, null)).not.toThrow();
    expect(() => policy.lock({ ...lock, specs: { a: {} as never } }, lock)).not.toThrow();
    expect(policy.writesLock).toBe(true);
  });

  it("refuses a variable set the lock does not hold, a changed key, a changed lock; never writes it", () => {
    expect(() => frozenPolicy(true, { ...facts, locked: undefined }).start()).toThrow(BuildFailure);
    expect(() => frozenPolicy(true, { ...facts, unrecorded: "a private run" }).start()).toThrow(
      /a private run/,
    );
    const policy = frozenPolicy(true, facts);
    expect(() => policy.start()).not.toThrow();
    expect(() => policy.stage("score", "k1", false, null)).not.toThrow();
    expect(() => policy.stage("score", "k2", false, null)).toThrow(StageError);
    expect(() => policy.stage("score", "k2", false, null)).toThrow(/stage score: its key differs/);
    expect(() => policy.lock(lock, lock)).not.toThrow();
    expect(() => policy.lock({ ...lock, specs: { a: {} as never } }, lock)).toThrow(/would change/);
    expect(policy.writesLock).toBe(false);
  });

  it("sends no request for a stage whose last run was incomplete", () => {
    const incomplete = { key: "k1", kind: "score", outputs: {}, incomplete: "2 requests failed" } as never;
    const policy = frozenPolicy(true, facts);
    expect(() => policy.stage("score", "k1", true, incomplete)).toThrow(
      /incomplete \(2 requests failed\), and --frozen/,
    );
    expect(() => policy.stage("score", "k1", false, incomplete)).not.toThrow();
  });
});

describe("the --shard policy", () => {
  it("a plain build writes results, holds nothing back, and fails on any incomplete stage", async () => {
    const plain = shardPolicy(undefined);
    expect(plain.lockName).toBe("");
    expect(plain.resultsSuffixes(".partial")).toEqual([".partial", ".release.partial"]);
    expect(plain.holds("2 requests failed")).toBe(false);
    expect(plain.fails("left to other shards")).toBe(true);
    expect(plain.fails(undefined)).toBe(false);
    expect(await plain.endsAfterStages({ remote: null } as unknown as Cache)).toBe(false);
  });

  it("a share writes no results, holds back the readers of its incomplete stages, ends early", async () => {
    const share = shardPolicy({ index: 2, count: 4 });
    expect(share.lockName).toBe("2/4");
    expect(share.resultsSuffixes("")).toEqual([]);
    expect(share.holds("left to other shards")).toBe(true);
    expect(share.holds(undefined)).toBe(false);
    expect(share.fails("3 requests left to other shards")).toBe(false);
    expect(share.fails("2 requests failed")).toBe(true);
    expect(await share.endsAfterStages({ remote: null } as unknown as Cache)).toBe(true);
  });
});
