// Replies that are no text answer (docs/model-requests.md, "What a reply is"): the providers' shapes of
// scripts/provider-replies over real HTTP. A refusal, a filtered reply and a tool call are the model's
// answers: stored, scored as no valid answer, counted in metrics.reply_audit and said on the terminal; the
// text parts of list content are the answer.
import { describe, expect, it } from "vitest";
import { cleanedAfterEach, type Project } from "../support/rig.js";
import {
  buildWarnings as warnings,
  projectAgainstFake,
  resultMetrics as metrics,
  resultRecords,
} from "../support/fake-build.js";
import { auditReplies } from "../../src/model/reply-audit.js";

const cleaned = cleanedAfterEach();
const setup = (server: Record<string, unknown>) => projectAgainstFake(cleaned, server);
const lines = <T>(p: Project, file: string) => resultRecords<T>(p, file);

interface Reply {
  id: string;
  error: string | null;
  text: string;
  finish_reason: string | null;
  reasoning: boolean;
  refusal?: string;
  tool_calls?: number;
}

describe("replies that are no text answer", () => {
  it("refusals, filtered replies and tool calls: stored, scored, counted and said", async () => {
    const replay = { "openai-refusal": 5, "azure-content-filter": 7, "openai-tool-calls": 11 };
    const { fake, p } = await setup({ replay });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    for (const name of Object.keys(replay)) expect(fake.stats.faults[`replay-${name}`]).toBeGreaterThan(0);
    const replies = lines<Reply>(p, "replies.jsonl");
    expect(replies.every((x) => x.error === null)).toBe(true);
    const refused = replies.filter((x) => x.refusal !== undefined);
    const filtered = replies.filter((x) => x.finish_reason === "content_filter");
    const tools = replies.filter((x) => x.tool_calls !== undefined);
    for (const x of refused) expect(x.refusal).toBe("I'm sorry, I cannot help with that request.");
    for (const x of [...refused, ...filtered, ...tools]) expect(x.text).toBe("");
    for (const x of tools) expect(x.tool_calls).toBe(1);
    const audit = metrics(p).metrics.reply_audit;
    expect(audit).toMatchObject({
      refusals: refused.length,
      content_filtered: filtered.length,
      tool_calls: tools.length,
    });
    expect(Math.min(refused.length, filtered.length, tools.length)).toBeGreaterThan(0);
    expect(metrics(p).metrics.api_errors).toBe(0);
    // Scored: each such item has its verdicts, and none is a valid answer.
    const items = new Map(
      lines<{ id: string; verdicts: { valid: boolean; api_error: boolean } }>(p, "items.jsonl").map((x) => [
        x.id,
        x,
      ]),
    );
    for (const x of [...refused, ...filtered, ...tools]) {
      expect(items.get(x.id)?.verdicts.api_error).toBe(false);
      expect(items.get(x.id)?.verdicts.valid).toBe(false);
    }
    const said = warnings(r.stderr).join("\n");
    expect(said).toContain(`${refused.length} refused by the model`);
    expect(said).toContain(`${filtered.length} withheld by the provider's content filter`);
    expect(said).toContain(`${tools.length} tool calls instead of an answer`);
    // Stored: the next build sends nothing.
    const sent = fake.stats.requests;
    const again = await p.buildAgainstFake();
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent);
  });

  it("content as a list of parts: the text parts are the answer, a thinking part is reasoning", async () => {
    const { fake, p } = await setup({ replay: { "mistral-content-parts": 3 } });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    const served = fake.stats.faults["replay-mistral-content-parts"]!;
    expect(served).toBeGreaterThan(0);
    const replies = lines<Reply>(p, "replies.jsonl");
    const withParts = replies.filter((x) => x.reasoning);
    expect(withParts.length).toBeGreaterThanOrEqual(served);
    for (const x of withParts) expect(JSON.parse(x.text)).toHaveProperty("response");
    const items = lines<{ id: string; verdicts: { valid: boolean } }>(p, "items.jsonl");
    const valid = new Set(items.filter((x) => x.verdicts.valid).map((x) => x.id));
    for (const x of withParts) expect(valid.has(x.id)).toBe(true);
    expect(metrics(p).metrics.thinking_audit.replies_with_reasoning_field).toBe(withParts.length);
  });
});

describe("a reply with no text and nothing that says why", () => {
  it("is counted and said (content null; no refusal, filter, tool call), not scored invalid unsaid", () => {
    const reply = { error: null, finish_reason: "stop", text: "" };
    const audit = auditReplies([reply, { ...reply, text: "yes" }], "fake/m", "m");
    expect(audit.counts.empty).toBe(1);
    expect(audit.warnings.join("\n")).toMatch(/1 with no text \(content null or empty\) and no refusal/);
    const filtered = { error: "refused", finish_reason: null, request_refused: { kind: "filtered" } };
    expect(auditReplies([filtered], "fake/m", "m").counts.content_filtered).toBe(1);
  });
});
