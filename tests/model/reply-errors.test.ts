// An error in a 200 is a failed try (docs/model-requests.md, "A failed request is not an answer"): the
// providers' shapes of scripts/provider-replies, replayed over real HTTP, are retried, never stored, counted
// in api_errors, and recorded and printed in the provider's words with the content type.
import { describe, expect, it } from "vitest";
import { cleanedAfterEach, type Project } from "../support/rig.js";
import type { Fake } from "../support/fake.js";
import {
  buildWarnings as warnings,
  projectAgainstFake,
  resultMetrics as metrics,
  resultRecords,
} from "../support/fake-build.js";

const cleaned = cleanedAfterEach();
const setup = (server: Record<string, unknown>) => projectAgainstFake(cleaned, server);
const replies = (p: Project) =>
  resultRecords<{ error: string | null; text: string; request_sha256: string }>(p, "replies.jsonl");

/** Bodies the server was sent since `before`, with how many times. */
function sentSince(fake: Fake, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, n] of fake.stats.bodies) if (n > (before.get(k) ?? 0)) out.set(k, n - (before.get(k) ?? 0));
  return out;
}

const SHAPES: [string, RegExp][] = [
  [
    "openrouter-error-in-200",
    new RegExp(
      '^a failed generation in a 200 reply \\(finish_reason "error"\\): ' +
        "502: Upstream provider returned an error \\(application/json\\)$",
    ),
  ],
  [
    "openrouter-error-object-in-200",
    /^an error in a 200 reply: 502: Provider returned error \(application\/json\)$/,
  ],
  [
    "openrouter-error-event-in-200",
    new RegExp(
      "^an event stream \\(text/event-stream\\) where a JSON reply was expected; " +
        "the stream's error: .*server_error: Provider disconnected unexpectedly",
    ),
  ],
];

describe("an error in a 200 is a failed try", () => {
  it.each(SHAPES)(
    "%s: never stored, counted, said in the provider's words; sent again",
    async (name, says) => {
      const { fake, p } = await setup({ replay: { [name]: 4 }, faultAttempts: 99 });
      const first = await p.buildAgainstFake();
      expect(first.exitCode, first.stderr).toBe(1); // incomplete
      const failed = replies(p).filter((r) => r.error !== null);
      expect(failed.length).toBeGreaterThan(0);
      for (const r of failed) expect(r.error).toMatch(says);
      expect(replies(p).filter((r) => r.error === null && r.text === "")).toEqual([]);
      expect(metrics(p).metrics.api_errors).toBe(failed.length);
      expect(metrics(p).incomplete).toBe(true);
      // Each failed body was tried twice (the route's max_attempts), not taken at the first.
      const failedKeys = new Set(failed.map((r) => r.request_sha256));
      expect(fake.stats.faults[`replay-${name}`]).toBe(2 * failedKeys.size);
      // The terminal's warning says the first error in the provider's words.
      expect(warnings(first.stderr).join("\n")).toContain(`requests failed`);
      expect(warnings(first.stderr).join("\n")).toContain(`the first: ${failed[0]!.error!}`);

      fake.set({ replay: {} });
      const before = new Map(fake.stats.bodies);
      const second = await p.buildAgainstFake();
      expect(second.exitCode, second.stderr).toBe(0);
      expect(sentSince(fake, before).size).toBe(failedKeys.size); // none was in the memo
      expect(metrics(p).metrics.api_errors).toBe(0);
    },
  );

  it("a failed generation on the first try only: the retry's answer is kept, nothing fails", async () => {
    const { fake, p } = await setup({ replay: { "openrouter-error-in-200": 3 } });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults["replay-openrouter-error-in-200"]).toBeGreaterThan(0);
    expect(metrics(p).metrics.api_errors).toBe(0);
    expect(replies(p).every((x) => x.error === null && x.text.length > 0)).toBe(true);
  });
});
