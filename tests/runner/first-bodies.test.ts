// The check before anything is sent (stages/model-bodies.ts, FirstBodies.deviations) makes one body per
// kind of request (its configuration, schema and generation fields): a request of another kind is checked
// for itself, so one the route cannot send is refused even after requests of a kind it can send; and with
// a model rule that fixes a field carrying an item's own text, every body is checked.
import { describe, expect, it } from "vitest";
import { FirstBodies } from "../../stages/model-bodies.js";
import { loadRoutes } from "../../src/model/registry.js";
import { gemini } from "../../src/model/gemini.js";
import { openai } from "../../src/model/openai.js";
import { StageError } from "../../src/errors.js";
import type { TaskRequest } from "../../tasks/task.js";

const maker = {
  route: loadRoutes([]).get("gemini")!,
  protocol: gemini,
  model: "gemini-2.5-flash",
  params: { max_tokens: 800, thinking: "off" as const },
};
const SCHEMA = { name: "reply", schema: { type: "object", properties: { a: { type: "string" } } } };
const request = (id: string, more: Partial<TaskRequest> = {}): TaskRequest => ({
  id,
  messages: [{ role: "user", content: `item ${id}` }],
  meta: {},
  ...more,
});

describe("the check before sending, one body per kind of request", () => {
  it("checks a request with generation fields of its own for itself", () => {
    const bodies = new FirstBodies(maker, [
      request("a"),
      request("b"),
      request("c", { generation: { seed: 1 } }),
    ]);
    const refused = new FirstBodies(maker, [request("a"), request("b", { generation: { logit_bias: {} } })]);
    expect(bodies.deviations(1)).toEqual(bodies.deviations(0));
    expect(() => bodies.deviations(2)).not.toThrow();
    expect(refused.deviations(0)).toEqual([]);
    expect(() => refused.deviations(1)).toThrow(StageError);
    expect(() => refused.deviations(1)).toThrow(
      /logit_bias has no counterpart in Gemini's generationConfig/,
    );
  });

  it("checks a request with another schema for itself", () => {
    const listed = { name: "reply", schema: { type: "object", properties: ["a"] } };
    const bodies = new FirstBodies(maker, [
      request("a", { schema: SCHEMA }),
      request("b", { schema: SCHEMA }),
      request("c", { schema: listed }),
    ]);
    expect(bodies.deviations(1)).toEqual(bodies.deviations(0));
    expect(() => bodies.deviations(2)).toThrow(/cannot be sent as Gemini's responseSchema/);
  });

  it("checks every body when the model's rule fixes a field that carries an item's own text", () => {
    // Absurd for a real model, but the body's check would compare each item's messages with it.
    const shipped = loadRoutes([]).get("openai")!;
    const fixed = { messages: [{ role: "user", content: "item a" }] };
    const route = { ...shipped, request: { ...shipped.request, models: { "gpt-4.1": { fixed } } } };
    const bodies = new FirstBodies({ route, protocol: openai, model: "gpt-4.1", params: {} }, [
      request("a"),
      request("b"),
    ]);
    expect(bodies.deviations(0)).toEqual([]);
    expect(() => bodies.deviations(1)).toThrow(/messages/);
  });
});
