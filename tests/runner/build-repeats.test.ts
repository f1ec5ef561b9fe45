// What a build works out once (issue 53, "each per-build repeat done once"), counted from outside the
// process, through the real CLI: each stage's code identity (stageCode, and codeIdentity under it) once
// per stage, each stage manifest read at most once and medbench.lock twice (tests/support/fs-trace.mjs),
// and each model request's first body serialised and hashed once, the token-rate check and --max-cost
// looking at it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Project, SUMS_SPECS } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";

const SPEC = "specs/sums.yaml";
const FS_TRACE = pathToFileURL(resolve(REPO, "tests/support/fs-trace.mjs")).href;
const COUNT_CALLS = resolve(REPO, "tests/support/count-calls.cjs");
/** The exports counted, by the compiled file that defines them. */
const COUNTED = {
  "stage-code.js": ["stageCode"],
  "code.js": ["codeIdentity"],
  "deviations.js": ["ruledRequest"],
  "body-fields.js": ["serialisedRequest"],
};

interface Counted {
  /** "file:export" -> calls. */
  calls: Record<string, number>;
  /** Each stage manifest of the project's cache the command read -> how many times. */
  manifests: Map<string, number>;
  /** How many times it read medbench.lock. */
  lockReads: number;
  /** The stages the command keyed (a build's summary, or status's list). */
  stages: number;
}

let runs = 0;
/** `medbench ARGS --json` in `p`, counted. */
async function counted(p: Project, args: string[]): Promise<Counted> {
  const out = p.path(`counts-${++runs}`);
  const run = await p.run([...args, "--json"], {
    NODE_OPTIONS: `--import ${FS_TRACE} --require ${COUNT_CALLS}`,
    FS_TRACE_COUNTS_OUT: `${out}.fs.json`,
    COUNT_CALLS: JSON.stringify(COUNTED),
    COUNT_CALLS_OUT: `${out}.calls.json`,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  const traced = JSON.parse(readFileSync(`${out}.fs.json`, "utf8")) as Record<
    string,
    Record<string, number>
  >;
  const manifests = new Map(
    Object.entries(traced)
      .filter(([path]) => path.startsWith(p.path("cache/stages/")) && path.endsWith(".json"))
      .map(([path, calls]) => [path, calls.readFileSync ?? 0]),
  );
  const stages = (JSON.parse(run.stdout.trim().split("\n").pop()!) as { stages: unknown[] }).stages.length;
  const calls = JSON.parse(readFileSync(`${out}.calls.json`, "utf8")) as Record<string, number>;
  const lockReads = traced[p.path("medbench.lock")]?.readFileSync ?? 0;
  return { calls, manifests, lockReads, stages };
}

/** Each stage's code worked out once, and no manifest read twice. */
function once(seen: Counted, stages = 6): void {
  expect(seen.stages).toBe(stages);
  expect(seen.calls["stage-code.js:stageCode"]).toBe(stages);
  expect(seen.calls["code.js:codeIdentity"]).toBe(stages); // a built-in model: no route's code to key
  expect(seen.manifests.size).toBeGreaterThanOrEqual(stages);
  expect([...seen.manifests].filter(([, reads]) => reads > 1)).toEqual([]);
}

describe("what a build works out once", () => {
  let fake: Fake;
  const p = new Project(SUMS_SPECS);

  beforeAll(async () => {
    fake = await startFake();
    const route = fakeRoute("fake", fake.url).replace(
      "    concurrency: 8\n",
      // The token-rate check and --max-cost each look at every first body before it is sent.
      '    concurrency: 8\n    tokens_per_minute: 100000000\n    price: { "m1": { input: 1, output: 1 } }\n',
    );
    p.write("routes.yaml", `routes:\n${route}`);
  });
  afterAll(() => fake.close());

  it("a first build, a full no-op and a status without the no-op record", async () => {
    once(await counted(p, ["build", SPEC]));
    const rekeyed = await counted(p, ["build", SPEC, "--rekey"]);
    once(rekeyed);
    // medbench.lock: read before the stages, and again under its own lock when the build records itself.
    expect(rekeyed.lockReads).toBe(2);
    // Without a no-op record (one is written once what a build read has settled), status keys every stage.
    rmSync(p.path("cache/noop"), { recursive: true, force: true });
    const status = await counted(p, ["status", SPEC]);
    once(status);
    expect(status.lockReads).toBe(1);
  });

  it("a build whose stages are stale against the lock reads each manifest once, old and new", async () => {
    p.edit(SPEC, (text) => text.replace("tolerance: 0", "tolerance: 1"));
    try {
      const seen = await counted(p, ["build", SPEC]);
      once(seen);
      // score and bootstrap: their locked keys' manifests and their new keys' (none yet), besides the four
      // fresh stages'.
      expect(seen.manifests.size).toBe(8);
    } finally {
      p.edit(SPEC, (text) => text.replace("tolerance: 1", "tolerance: 0"));
    }
  });

  it("each request's first body is serialised and hashed once, and built once", async () => {
    const before = fake.stats.requests;
    const args = ["build", SPEC, "--registry", "routes.yaml", "--model", "fake/m1", "--max-cost", "100"];
    const seen = await counted(p, args);
    const sent = fake.stats.requests - before;
    expect(sent).toBeGreaterThan(1);
    // Built once for the token-rate check, --max-cost and the send together; the check before anything is
    // sent builds one body per kind of request (stages/model-bodies.ts), and the sums task's requests are
    // of one kind (no configuration, one schema, no generation fields of their own).
    expect(seen.calls["deviations.js:ruledRequest"]).toBe(sent + 1);
    expect(seen.calls["body-fields.js:serialisedRequest"]).toBe(sent);
  });
});
