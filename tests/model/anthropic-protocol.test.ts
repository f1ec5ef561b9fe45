// Anthropic's protocol read directly: the bodies it builds for thinking on and for a reply schema with
// thinking on (structured output, as a forced tool is refused with thinking), each valid against the
// request schema from Anthropic's reference; the bodies it refuses to build; what its rate-limit headers
// and its spend-limit errors mean.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { testData } from "../support/helpers.js";
import { anthropic } from "../../src/model/anthropic.js";
import { anthropicAdvice } from "../../src/model/anthropic-errors.js";
import { UnsendableRequest, type ChatRequest } from "../../src/model/protocol.js";
import type { Route } from "../../src/model/registry.js";

const Ajv = createRequire(import.meta.url)("ajv") as typeof import("ajv").default;
const validate = new Ajv({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(testData("anthropic-messages", "request.schema.json"), "utf8")) as object,
);
const route = { name: "anthropic", base_url: "https://api.anthropic.com", request: {} } as Route;
const request: ChatRequest = {
  messages: [
    { role: "system", content: "Answer in JSON." },
    { role: "user", content: "Stop the robot." },
  ],
  schema: {
    name: "robot_command",
    schema: { type: "object", properties: { response: { type: "string" } } },
  },
};
const body = (params: object, format: "json_schema" | "none" = "json_schema") =>
  anthropic.body(request, { max_tokens: 4096, ...params }, route, "claude-sonnet-4-5", format);

describe("Anthropic's request bodies", () => {
  it("thinking off: no thinking field, the schema as a forced tool, the system prompt top-level", () => {
    const sent = body({ thinking: "off", temperature: 0 });
    expect(validate(sent), JSON.stringify(validate.errors)).toBe(true);
    expect(sent).not.toHaveProperty("thinking");
    expect(sent.tool_choice).toEqual({ type: "tool", name: "robot_command" });
    expect(sent.system).toBe("Answer in JSON.");
    expect(sent.messages).toEqual([{ role: "user", content: "Stop the robot." }]);
  });

  it("thinking on: a budget below max_tokens, and the schema as structured output", () => {
    const sent = body({ thinking: "on" });
    expect(validate(sent), JSON.stringify(validate.errors)).toBe(true);
    expect(sent.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(sent).not.toHaveProperty("tool_choice");
    expect(sent.output_config).toEqual({ format: { type: "json_schema", schema: request.schema!.schema } });
    expect(body({ thinking: "on" }, "none")).not.toHaveProperty("output_config");
  });

  it("refuses what the API would: no max_tokens, thinking on with a temperature or too few tokens", () => {
    const refused = (params: object) => () => body(params);
    expect(refused({ max_tokens: undefined })).toThrow(UnsendableRequest);
    expect(refused({ max_tokens: undefined })).toThrow(/requires max_tokens/);
    expect(refused({ thinking: "on", temperature: 0 })).toThrow(/temperature only at 1/);
    expect(refused({ thinking: "on", max_tokens: 1024 })).toThrow(/above 1024/);
  });
});

describe("Anthropic's errors", () => {
  const error = (status: number, payload: object, headers = {}) =>
    anthropic.error({ status, headers, text: JSON.stringify({ type: "error", error: payload }) }, 100);

  it("a spend limit stops the route; a rate limit and an overload are tried again", () => {
    const spend = {
      type: "rate_limit_error",
      message: "cap",
      details: { error_code: "enforced_spend_limit_reached" },
    };
    expect(error(429, spend)).toMatchObject({ kind: "stop_route", why: expect.stringContaining("cap") });
    expect(error(429, { type: "rate_limit_error", message: "slow down" })).toMatchObject({
      kind: "retry",
      rateLimited: true,
    });
    expect(error(529, { type: "overloaded_error", message: "Overloaded" })).toMatchObject({
      kind: "retry",
      rateLimited: false,
    });
    expect(
      error(400, { type: "invalid_request_error", message: "prompt is too long: 3 tokens > 2 maximum" }),
    ).toEqual({ kind: "refused" });
  });

  it("waits for the reset of the limit a request cannot pass when there is no retry-after", () => {
    const now = Date.parse("2026-12-07T00:00:00Z");
    const advice = anthropicAdvice(
      {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "10",
        "anthropic-ratelimit-requests-reset": "2026-12-07T00:00:05Z",
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "50",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-07T00:00:30Z",
      },
      100,
      now,
    );
    // The input tokens cannot take 100 more; they come back at 29950 per 30 s.
    expect(advice.waitMs).toBe(30_000);
    expect(advice.requestsPerMs).toBeNull();
    expect(advice.tokensPerMs).toBeCloseTo(29_950 / 30_000);
    expect(anthropicAdvice({ "retry-after": "2" }, 100, now).waitMs).toBe(2000);
  });
});
