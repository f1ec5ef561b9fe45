// The three tasks built over Anthropic's Messages API (protocol: anthropic) against the fake Anthropic
// server, driven through the CLI: each gives the same metrics as the same answers over OpenAI's format (the
// fake OpenAI server with the same policy); every body sent is valid against the request schema written
// from Anthropic's reference (tests/data/anthropic-messages/); the reply schema goes as a forced tool call;
// a thinking model's thinking blocks and tokens are in the thinking audit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";
import type { Fake } from "../support/fake.js";
import { comparable, protocolRig, TASKS, type ProtocolRig, type Task } from "../support/three-tasks.js";
import { anthropicRoute, startAnthropicFake, type AnthropicFake } from "../support/fake-anthropic.js";

const Ajv = createRequire(import.meta.url)("ajv") as typeof import("ajv").default;
const REQUEST_SCHEMA = JSON.parse(
  readFileSync(testData("anthropic-messages", "request.schema.json"), "utf8"),
) as object;
const KEY = "sk-ant-test-0123456789";
const MODEL = "claude-sonnet-4-5";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- metrics.json, read field by field
type Metrics = any;

/** A run's numbers as comparable() gives them. The note-errors policy sends some replies with a reasoning
 *  field unasked, as an OpenAI-compatible server may; the Messages API sends thinking only when asked
 *  (`unasked`: that count is left out, each side's checked on its own). */
const scored = (metrics: Metrics, route: string, unasked = false): unknown =>
  comparable(metrics, route, unasked ? ["replies_with_reasoning_field"] : []);

describe("the three tasks over Anthropic's Messages API", () => {
  const openaiFakes: Fake[] = [];
  const anthropicFakes: AnthropicFake[] = [];
  let rig: ProtocolRig<AnthropicFake>;
  let p: Project;
  beforeAll(async () => {
    rig = await protocolRig((policy) => startAnthropicFake({ policy, apiKey: KEY }), anthropicRoute, "an");
    p = rig.p;
    openaiFakes.push(...rig.openai);
    anthropicFakes.push(...rig.other);
  });
  afterAll(async () => {
    await rig.close();
  });

  const build = async (task: Task, route: string, model = MODEL, extra: string[] = []) => {
    const judge = task.policy === "mtsamples" ? ["--judge", `${route}/${model}`] : [];
    const args = ["build", task.spec, "--model", `${route}/${model}`, ...judge, ...task.args, ...extra];
    const run = await p.run([...args, "--registry", "routes.yaml", "--json"], { ANTHROPIC_API_KEY: KEY });
    expect(run.exitCode, run.stderr).toBe(task.incomplete ? 1 : 0);
    return run;
  };
  const metricsOf = (task: Task, route: string, model = MODEL): Metrics =>
    JSON.parse(p.read(`results/${task.slug}/${route}_${model}${task.folder}/metrics.json`));

  it.each(TASKS.map((task, i) => [task.spec, i] as const))(
    "%s: the same metrics as the same answers over OpenAI's format",
    async (_spec, i) => {
      const task = TASKS[i]!;
      await build(task, `oa-${task.policy}`);
      await build(task, `an-${task.policy}`);
      const openai = metricsOf(task, `oa-${task.policy}`);
      const anthropic = metricsOf(task, `an-${task.policy}`);
      const unasked = task.policy === "note-errors";
      expect(scored(anthropic, `an-${task.policy}`, unasked)).toEqual(
        scored(openai, `oa-${task.policy}`, unasked),
      );
      if (unasked) {
        expect(openai.metrics.thinking_audit.replies_with_reasoning_field).toBeGreaterThan(0);
        expect(anthropic.metrics.thinking_audit.replies_with_reasoning_field).toBe(0);
      }
      expect(Object.keys(anthropic.metrics).length).toBeGreaterThan(3);
      // metrics.request says what each item's own fields held (its system prompt too), never their text.
      expect(anthropic.metrics.request.messages).toMatch(/^per item: \d+ messages \(user\)$/);
      expect(anthropic.metrics.request.system).toBe("per item");
      const sent = anthropicFakes[i]!.stats.received;
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((request) => request.apiKey === KEY)).toBe(true);
      expect(sent.every((request) => request.headers["anthropic-version"] === "2023-06-01")).toBe(true);
      expect(sent.every((request) => request.url === "/v1/messages")).toBe(true);
      // Thinking off (or left to the model) is no `thinking` field at all.
      expect(sent.some((request) => "thinking" in request.body)).toBe(false);
    },
  );

  it("every body sent is valid against the request schema from Anthropic's reference", () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(REQUEST_SCHEMA);
    const bodies = anthropicFakes.flatMap((fake) => fake.stats.received.map((request) => request.body));
    expect(bodies.length).toBeGreaterThan(300);
    const invalid = bodies.filter((body) => !validate(body));
    expect(invalid.slice(0, 2).map((body) => (validate(body), validate.errors))).toEqual([]);
    // voice-command's reply schema went as a forced call of one tool; its system prompt top-level.
    const voice = anthropicFakes[0]!.stats.received[0]!.body;
    expect(voice.tool_choice).toEqual({ type: "tool", name: voice.tools[0].name });
    expect(voice.tools[0].input_schema.type).toBe("object");
    expect(typeof voice.system).toBe("string");
    expect(voice.messages.map((message: { role: string }) => message.role)).toEqual(["user"]);
    expect(voice.max_tokens).toBeGreaterThan(0);
  });

  it("a model that thinks: its thinking blocks and tokens in the thinking audit", async () => {
    const task = TASKS[0]!;
    anthropicFakes[0]!.set({ thinking: true });
    const model = "claude-opus-4-1";
    await build(task, `an-${task.policy}`, model);
    anthropicFakes[0]!.set({ thinking: false });
    const audit = metricsOf(task, `an-${task.policy}`, model).metrics.thinking_audit;
    const sent = anthropicFakes[0]!.stats.received.filter((request) => request.body.model === model);
    expect(audit.thinking_off).toBe(false);
    // Items of one body share its one request (its reply recalled from the memo): each body sent once, and
    // every item's reply has the thinking.
    expect(new Set(sent.map((request) => JSON.stringify(request.body))).size).toBe(sent.length);
    expect(audit.replies_with_reasoning_field).toBeGreaterThanOrEqual(sent.length);
    expect(audit.replies_with_reasoning_tokens).toBe(audit.replies_with_reasoning_field);
  });
});
