// Reading what the Gemini API sends back (src/model/gemini-reply.ts), on every shape of the Gemini corpus
// (scripts/provider-replies/gemini/, each with its public source): an answer is a reply, a retry is a failed
// try or a transient error (a 429 waits RetryInfo.retryDelay), a refused item is final and a refused route
// is the route's; and what each reply says (its text without thoughts, its finish in medbench's words, its
// reasoning tokens, its served model, its token totals).
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";
import {
  classifyGeminiRefusal,
  geminiReply,
  geminiSuccess,
  geminiTokens,
  readGeminiError,
} from "../../src/model/gemini-reply.js";
import { isFinal } from "../../src/model/refusal.js";
import type { Json } from "../../src/util/json.js";
// @ts-expect-error: a plain ES module of the scripts, without types
import { loadReplies, replayed } from "../../scripts/provider-replies/index.mjs";

interface Entry {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
  expect: "answer" | "retry" | "refused-format" | "refused-item" | "refused-route";
}
const CORPUS = loadReplies(`${REPO}/scripts/provider-replies/gemini`) as Record<string, Entry>;

/** The entry as the fake serves it: its status, headers and body text. */
function served(name: string): { status: number; headers: Record<string, string>; text: string } {
  const { status, headers, body } = replayed(
    CORPUS[name],
    { model: "gemini-2.5-flash" },
    '{"response":"x"}',
  );
  return { status, headers, text: body };
}

/** What medbench makes of a reply: answer, retry, stop, or the refusal's kind. */
function outcome(name: string): string {
  const { status, headers, text } = served(name);
  if (status >= 200 && status < 300)
    return "body" in geminiSuccess(text, headers["content-type"] ?? null) ? "answer" : "retry";
  const reading = readGeminiError({ status, headers, text }, 100);
  if (reading.kind !== "refused") return reading.kind;
  const refusal = classifyGeminiRefusal(status, text);
  if (refusal.kind === "route") return "refused-route";
  if (refusal.kind === "format") return "refused-format";
  return isFinal(refusal) ? "refused-item" : `refused (${refusal.kind})`;
}

describe("the Gemini corpus as medbench reads it", () => {
  it.each(Object.keys(CORPUS))("%s is taken as its entry expects", (name) => {
    expect(outcome(name)).toBe(CORPUS[name]!.expect);
  });

  it("waits a 429's RetryInfo.retryDelay, and pauses the route", () => {
    const reading = readGeminiError(served("rate-limit-retry-info"), 100);
    expect(reading).toMatchObject({ kind: "retry", rateLimited: true, advice: { waitMs: 1000 } });
    const array = readGeminiError(served("rate-limit-array"), 100);
    expect(array).toMatchObject({ kind: "retry", rateLimited: true, advice: { waitMs: null } });
  });

  it("stops the route on a per-day quota, with the provider's words", () => {
    const daily = JSON.parse(served("rate-limit-retry-info").text);
    daily.error.details[0].violations[0].quotaId = "GenerateRequestsPerDayPerProjectPerModel-FreeTier";
    const reading = readGeminiError({ status: 429, headers: {}, text: JSON.stringify(daily) }, 100);
    expect(reading.kind).toBe("stop_route");
    expect((reading as { why: string }).why).toContain("PerDay");
  });

  it("reads a context-length refusal alike as an object or an array", () => {
    for (const name of ["context-length", "context-length-array"]) {
      const { status, text } = served(name);
      expect(classifyGeminiRefusal(status, text)).toMatchObject({
        kind: "context_length",
        message: expect.stringContaining("exceeds the maximum number of tokens"),
      });
    }
  });
});

describe("what a Gemini reply says", () => {
  const reply = (name: string) => geminiReply(JSON.parse(served(name).text) as Json);

  it("the text without the thought parts, which are the reasoning, with their tokens", () => {
    const fields = reply("thought-parts");
    expect(fields.text).toBe('{"response":"x"}');
    expect(fields.reasoning).toBe(true);
    expect(fields.reasoning_content).toContain("Reading the request");
    // The served reply's own count of thought tokens.
    const sent = JSON.parse(served("thought-parts").text) as {
      usageMetadata: { thoughtsTokenCount: number };
    };
    expect(fields.reasoning_tokens).toBe(sent.usageMetadata.thoughtsTokenCount);
    expect(fields.served_model).toBe("gemini-2.5-flash-001");
    expect(fields.finish_reason).toBe("stop");
  });

  it.each([
    ["prompt-blocked", "content_filter"],
    ["prohibited-content", "content_filter"],
    ["finish-safety", "content_filter"],
    ["finish-recitation", "content_filter"],
    ["max-tokens", "length"],
  ])("%s ends with finish_reason %s", (name, finish) => {
    expect(reply(name).finish_reason).toBe(finish);
  });

  it("its tokens: thoughts are output and reasoning, cached content part of the prompt", () => {
    const usage = JSON.parse(served("thought-parts").text).usageMetadata as Json;
    expect(geminiTokens(usage)).toEqual({ prompt: 5, completion: 238 + 41, reasoning: 41, cached: 3 });
    expect(geminiTokens(undefined)).toBeNull();
  });
});
