// verify --live under faults: a live request that fails is reported as a failure, never as
// a verdict that flipped; a live run with failures (or a route that stopped) is incomplete and exits 1; the
// live run shows its progress. Against the fake OpenAI-compatible server over real HTTP.
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach, expectCleanFailure } from "../support/rig.js";
import { startFake, type Fake } from "../support/fake.js";

const { servers, projects } = cleanedAfterEach();

const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";
// A healthy request never meets a 120 s limit on a loaded machine; only the dead-route test needs a short
// one.
const quick = (timeoutS: number) => `    concurrency: 4
    timeout_s: ${timeoutS}
    retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 300 }
`;
const routes = (url: string, extra = "    max_failures_in_a_row: 1000\n", timeoutS = 120) =>
  `routes:\n  fake:\n    base_url: ${url}\n    request:\n` +
  `      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n${quick(timeoutS)}${extra}`;

interface LiveJson {
  ok: boolean;
  checks: { name: string; ok: boolean | null; lines: string[] }[];
  live: {
    incomplete: string | null;
    failures: { stage: string; failed: number; total: number; ids: string[] }[];
    verdicts: { key: string; group: string; n: number; changed: number }[];
    metrics: { metric: string; live: number | null }[];
  };
}

/** A result built against a healthy server and exported; a verifier project whose route is `live`. */
async function published(live: Record<string, unknown>, extra?: string, timeoutS?: number) {
  const healthy: Fake = await startFake({});
  const faulty: Fake = await startFake(live);
  servers.push(healthy, faulty);
  const a = new Project(),
    v = new Project(false);
  projects.push(a, v);
  a.write("routes.yaml", routes(healthy.url));
  const built = await a.buildAgainstFake();
  expect(built.exitCode, built.stderr).toBe(0);
  const exported = await a.run(["export", RESULTS, "-o", "b.tar.gz"]);
  expect(exported.exitCode, exported.stderr).toBe(0);
  v.write("routes.yaml", routes(faulty.url, extra, timeoutS));
  const verify = (json = true) =>
    v.run([
      "verify",
      a.path("b.tar.gz"),
      "--live",
      "--registry",
      "routes.yaml",
      ...(json ? ["--json"] : []),
    ]);
  return { faulty, verify };
}

const changed = (r: LiveJson) => r.live.verdicts.reduce((n, g) => n + g.changed, 0);

describe("verify --live under faults (14.9)", () => {
  it("all live requests fail: no verdict counted flipped; incomplete, exit 1, progress said", async () => {
    const { verify } = await published({ faults: { 503: 1 }, faultAttempts: 99 });
    const r = await verify();
    expect(r.exitCode, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as LiveJson;
    expect(out.ok).toBe(false);
    expect(changed(out)).toBe(0);
    expect(out.live.verdicts.every((g) => g.n === 0)).toBe(true);
    const failed = out.live.failures.find((f) => f.stage === "model")!;
    expect(failed.failed).toBe(failed.total);
    expect(failed.ids.length).toBe(failed.total); // every item named (item ids are unique)
    expect(out.live.incomplete).toMatch(/live requests failed/);
    expect(out.checks.find((c) => c.name === "replay")!.ok).toBe(true); // the replay itself is fine
    expect(out.checks.find((c) => c.name === "live")!.ok).toBe(false);
    // Progress: JSON events on stderr, the last one the whole stage.
    const progress = r.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "progress");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ stage: "model", done: failed.total, total: failed.total });

    const text = await verify(false);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain("NOT verified: the live run is incomplete");
    expect(text.stdout).not.toContain("verified: the published result is reproduced");
    expect(text.stderr).toMatch(new RegExp(`… model ${failed.total}/${failed.total}`));
    expect(text.stderr).not.toContain("internal error");
  });

  it("a third failing, then a healthy server: the next run sends just those, and verifies", async () => {
    const { faulty, verify } = await published({ faults: { 503: 3 }, faultAttempts: 99 });
    const r = await verify();
    expect(r.exitCode, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as LiveJson;
    const failed = out.live.failures.find((f) => f.stage === "model")!;
    expect(failed.failed).toBeGreaterThan(0);
    expect(failed.failed).toBeLessThan(failed.total);
    expect(changed(out)).toBe(0); // the same policy: answered items agree, failures are no flips
    expect(out.live.verdicts.find((g) => g.key === "exact")!.n).toBeGreaterThan(0);
    expect(out.live.incomplete).toBe(`${failed.failed} of ${failed.total} live requests failed (no answer)`);

    const unanswered = [...faulty.stats.bodies.keys()].filter((k) => !faulty.stats.answered.has(k));
    const before = new Map(faulty.stats.bodies);
    faulty.set({ faults: {} });
    const again = await verify();
    expect(again.exitCode, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout) as LiveJson;
    expect(second.ok).toBe(true);
    expect(second.live.incomplete).toBeNull();
    expect(changed(second)).toBe(0);
    const resent = [...faulty.stats.bodies].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k]) => k);
    expect(resent.sort()).toEqual(unanswered.sort());
  });

  it("a dead route stops the live run: incomplete with the route's error, exit 1, no stack", async () => {
    const { verify } = await published({ deadAfter: 0 }, "    max_failures_in_a_row: 4\n", 1);
    const r = await verify(false);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/incomplete: stage model: route fake \(http:\/\/127\.0\.0\.1:\d+\/v1\)/);
    expect(r.stdout).toContain("NOT verified: the live run is incomplete");
    expectCleanFailure(r.stderr);
  });
});
