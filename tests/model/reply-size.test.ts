// A reply's size is bounded (docs/model-requests.md, "The HTTP client"): past the route's max_reply_mb a try
// ends before the body is held whole, as a failed try with a clear message, never a Node stack trace.
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach, expectCleanFailure } from "../support/rig.js";
import { projectAgainstFake, resultMetrics, resultRecords } from "../support/fake-build.js";

const cleaned = cleanedAfterEach();

/** A route whose replies may be at most 1 KiB (the fake's own replies are a few hundred bytes). */
const setup = (server: Record<string, unknown>) =>
  projectAgainstFake(
    cleaned,
    server,
    (url) => `routes:
  fake:
    base_url: ${url}
    concurrency: 4
    max_reply_mb: 0.001
    retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 300 }
    max_failures_in_a_row: 1000
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`,
  );

const replies = (p: Project) =>
  resultRecords<{ error: string | null; text: string; request_sha256: string }>(p, "replies.jsonl");

describe("a reply past the route's size limit", () => {
  it("is a failed try: retried, and the retry's answer kept", async () => {
    const { fake, p } = await setup({ faults: { large: 5 }, largeBytes: 4 << 20 });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults.large).toBeGreaterThan(0);
    // Every reply is the policy's answer, none the oversized one.
    expect(replies(p).every((x) => x.error === null && x.text.startsWith("{"))).toBe(true);
  });

  it("always too large: each request fails naming the limit, the run incomplete, no trace", async () => {
    const { fake, p } = await setup({ faults: { large: 5 }, faultAttempts: 99, largeBytes: 4 << 20 });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(1);
    expectCleanFailure(r.stderr);
    expect(r.stderr).not.toContain("ERR_STRING_TOO_LONG");
    const failed = replies(p).filter((x) => x.error !== null);
    expect(failed.length).toBeGreaterThan(0);
    for (const x of failed)
      expect(x.error).toBe(
        "reply body larger than the route's max_reply_mb (0.001 MiB, 1048 bytes); not read further; " +
          "raise max_reply_mb in route fake if such replies are expected",
      );
    expect(resultMetrics(p).metrics.api_errors).toBe(failed.length);
    // Each tried twice (the route's max_attempts), as a failed try is.
    expect(fake.stats.faults.large).toBe(2 * new Set(failed.map((x) => x.request_sha256)).size);
  });

  it("a limit that is not a positive number is refused where it is written", async () => {
    const p = new Project();
    cleaned.projects.push(p);
    p.write("routes.yaml", "routes:\n  fake:\n    base_url: http://127.0.0.1:9/v1\n    max_reply_mb: 0\n");
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/routes\.yaml:4:19: routes\.fake\.max_reply_mb: must be > 0/);
  });
});
