// The three tasks built over each provider's own API (protocol: anthropic, protocol: gemini) against its
// fake server, driven through the CLI, one table row a protocol: each task gives the same metrics as the
// same answers over OpenAI's format (the fake OpenAI server with the same policy); every body sent is valid
// against the request schema written from the provider's reference (tests/data/anthropic-messages/,
// tests/data/gemini-request/); and each protocol's own case: Anthropic's reply schema as a forced tool
// call and a thinking model's blocks in the thinking audit; Gemini's responseSchema, and a model that
// cannot switch thinking off run on the shipped route at its lowest budget, the deviation on record.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { testData } from "../support/helpers.js";
import type { ProviderFake, ProviderRequest } from "../support/provider-fake.js";
import { comparable, protocolRig, TASKS, type ProtocolRig, type Task } from "../support/three-tasks.js";
import { anthropicRoute, startAnthropicFake, type AnthropicRequest } from "../support/fake-anthropic.js";
import { geminiRoute, startGeminiFake, type GeminiRequest } from "../support/fake-gemini.js";

const Ajv = createRequire(import.meta.url)("ajv") as typeof import("ajv").default;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- metrics.json, read field by field
type Metrics = any;
type Fake = ProviderFake<ProviderRequest>;

/** What a protocol's build test needs: the project with its fakes, a build through the CLI, its metrics. */
interface Built {
  rig: ProtocolRig<Fake>;
  build(task: Task, route: string, model?: string): Promise<{ exitCode?: number; stderr: string }>;
  metricsOf(task: Task, route: string, model?: string): Metrics;
}

interface Protocol {
  title: string;
  /** Whose reference the request schema was written from. */
  reference: string;
  prefix: string;
  schema: [string, string];
  keyEnv: string;
  key: string;
  model: string;
  start(options: Record<string, unknown>): Promise<Fake>;
  route(name: string, url: string): string;
  /** Metrics left out of the comparison with OpenAI's run of a task (each side checked on its own). */
  dropped(task: Task): string[];
  /** The text of a body's first user message. */
  prompt(body: Metrics): string;
  /** The protocol's own checks of a task's run: its metrics, the OpenAI run's, the requests sent. */
  checkRun(task: Task, metrics: Metrics, openai: Metrics, sent: ProviderRequest[]): void;
  /** The protocol's own checks of the first body sent for voice-command. */
  checkVoiceBody(body: Metrics): void;
  /** The protocol's own cases (registered inside its describe). */
  cases(built: Built): void;
}

const blockText = (content: string | { text?: string }[]) =>
  typeof content === "string" ? content : content.map((block) => block.text ?? "").join("");

const ANTHROPIC: Protocol = {
  title: "the three tasks over Anthropic's Messages API",
  reference: "Anthropic's",
  prefix: "an",
  schema: ["anthropic-messages", "request.schema.json"],
  keyEnv: "ANTHROPIC_API_KEY",
  key: "sk-ant-test-0123456789",
  model: "claude-sonnet-4-5",
  start: startAnthropicFake,
  route: anthropicRoute,
  // The note-errors policy sends some replies with a reasoning field unasked, as an OpenAI-compatible server
  // may; the Messages API sends thinking only when asked.
  dropped: (task) => (task.policy === "note-errors" ? ["replies_with_reasoning_field"] : []),
  prompt: (body) => blockText(body.messages[0].content),
  checkRun(task, metrics, openai, sent) {
    if (task.policy === "note-errors") {
      expect(openai.metrics.thinking_audit.replies_with_reasoning_field).toBeGreaterThan(0);
      expect(metrics.metrics.thinking_audit.replies_with_reasoning_field).toBe(0);
    }
    // metrics.request says what each item's own fields held (its system prompt too).
    expect(metrics.metrics.request.messages).toMatch(/^per item: \d+ messages \(user\)$/);
    expect(metrics.metrics.request.system).toBe("per item");
    const headers = sent.map((request) => (request as AnthropicRequest).headers["anthropic-version"]);
    expect(headers.every((version) => version === "2023-06-01")).toBe(true);
    expect(sent.every((request) => request.url === "/v1/messages")).toBe(true);
    // Thinking off (or left to the model) is no `thinking` field at all.
    expect(sent.some((request) => "thinking" in request.body)).toBe(false);
  },
  checkVoiceBody(voice) {
    // voice-command's reply schema went as a forced call of one tool; its system prompt top-level.
    expect(voice.tool_choice).toEqual({ type: "tool", name: voice.tools[0].name });
    expect(voice.tools[0].input_schema.type).toBe("object");
    expect(typeof voice.system).toBe("string");
    expect(voice.messages.map((message: { role: string }) => message.role)).toEqual(["user"]);
    expect(voice.max_tokens).toBeGreaterThan(0);
  },
  cases: (built) => {
    it("a model that thinks: its thinking blocks and tokens in the thinking audit", async () => {
      const task = TASKS[0]!;
      const fake = built.rig.other[0]!;
      fake.set({ thinking: true });
      const model = "claude-opus-4-1";
      await built.build(task, `an-${task.policy}`, model);
      fake.set({ thinking: false });
      const audit = built.metricsOf(task, `an-${task.policy}`, model).metrics.thinking_audit;
      const sent = fake.stats.received.filter((request) => request.body.model === model);
      expect(audit.thinking_off).toBe(false);
      // Items of one body share its one request (its reply recalled from the memo): each body sent once,
      // and every item's reply has the thinking.
      expect(new Set(sent.map((request) => JSON.stringify(request.body))).size).toBe(sent.length);
      expect(audit.replies_with_reasoning_field).toBeGreaterThanOrEqual(sent.length);
      expect(audit.replies_with_reasoning_tokens).toBe(audit.replies_with_reasoning_field);
    });
  },
};

const GEMINI: Protocol = {
  title: "the three tasks over the Gemini API",
  reference: "Google's",
  prefix: "gm",
  schema: ["gemini-request", "generate-content-request.schema.json"],
  keyEnv: "GEMINI_API_KEY",
  key: "gm-test-key-0123456789",
  model: "gemini-2.5-flash",
  start: startGeminiFake,
  route: geminiRoute,
  // A task that does not switch thinking off (MTSamples) leaves Gemini 2.5 Flash to think as it does by
  // default, so its thinking audits differ by right.
  dropped: (task) => (task.policy === "mtsamples" ? ["thinking_audit"] : []),
  prompt: (body) => String(body.contents[0].parts[0].text),
  checkRun(_task, metrics, _openai, sent) {
    expect(metrics.metrics.request.contents).toMatch(/^per item: 1 contents \(user\)$/);
    expect(sent.every((request) => (request as GeminiRequest).model === GEMINI.model)).toBe(true);
  },
  checkVoiceBody(voice) {
    // voice-command's reply schema went as responseSchema; thinking went off with budget 0.
    expect(voice.generationConfig.responseMimeType).toBe("application/json");
    expect(voice.generationConfig.responseSchema.type).toBe("OBJECT");
    expect(voice.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(voice.systemInstruction.parts[0].text.length).toBeGreaterThan(0);
  },
  cases: (built) => {
    const title = "2.5 Pro on the shipped route: lowest budget, the deviation on record, thoughts audited";
    it(title, async () => {
      // The shipped `gemini` route, sent to the fake by GOOGLE_GEMINI_BASE_URL as the SDK would be.
      const fake = built.rig.other[0]!;
      const env = { GEMINI_API_KEY: GEMINI.key, GOOGLE_GEMINI_BASE_URL: fake.url };
      const args = ["build", "specs/voice-command.yaml", "--model", "gemini/gemini-2.5-pro"];
      const run = await built.rig.p.run(args, env);
      expect(run.exitCode, run.stderr).toBe(0);
      const metrics = built.metricsOf(TASKS[0]!, "gemini", "gemini-2.5-pro");
      const sent = fake.stats.received.filter(
        (request) => (request as GeminiRequest).model === "gemini-2.5-pro",
      );
      expect(sent.length).toBeGreaterThan(0);
      const lowest = { thinkingBudget: 128, includeThoughts: true };
      for (const request of sent) expect(request.body.generationConfig.thinkingConfig).toEqual(lowest);
      expect(metrics.deviations).toEqual([
        {
          field: "thinking",
          spec: "off",
          sent: { generationConfig: { thinkingConfig: lowest } },
          rule: "gemini gemini-2.5-pro* reasoning_low",
        },
      ]);
      expect(run.stderr).toMatch(/deviation from the spec: thinking: the spec asks "off", sent/);
      const audit = metrics.metrics.thinking_audit;
      expect(audit.thinking_off).toBe(false);
      // Items of one body share its one request (its reply recalled from the memo): every item's reply
      // counted.
      expect(audit.replies_with_reasoning_field).toBeGreaterThanOrEqual(sent.length);
      expect(audit.replies_with_reasoning_tokens).toBe(audit.replies_with_reasoning_field);
    });
  },
};

/** The protocol's rig, made before the describe's tests and closed after them, and its build. */
function builtOver(protocol: Protocol): Built {
  const built: Built = {
    rig: undefined as unknown as ProtocolRig<Fake>,
    async build(task: Task, route: string, model = protocol.model) {
      const judge = task.policy === "mtsamples" ? ["--judge", `${route}/${model}`] : [];
      const args = ["build", task.spec, "--model", `${route}/${model}`, ...judge, ...task.args];
      const env = { [protocol.keyEnv]: protocol.key };
      const run = await built.rig.p.run([...args, "--registry", "routes.yaml", "--json"], env);
      expect(run.exitCode, run.stderr).toBe(task.incomplete ? 1 : 0);
      return run;
    },
    metricsOf: (task: Task, route: string, model = protocol.model): Metrics =>
      JSON.parse(built.rig.p.read(`results/${task.slug}/${route}_${model}${task.folder}/metrics.json`)),
  };
  beforeAll(async () => {
    const start = (policy: string) => protocol.start({ policy, apiKey: protocol.key });
    built.rig = await protocolRig(start, protocol.route, protocol.prefix);
  });
  afterAll(async () => {
    await built.rig.close();
  });
  return built;
}

for (const protocol of [ANTHROPIC, GEMINI])
  describe(protocol.title, () => {
    const built = builtOver(protocol);
    const fakes = () => built.rig.other;

    it.each(TASKS.map((task, i) => [task.spec, i] as const))(
      "%s: the same metrics as the same answers over OpenAI's format",
      async (_spec, i) => {
        const task = TASKS[i]!;
        const [openaiRoute, route] = [`oa-${task.policy}`, `${protocol.prefix}-${task.policy}`];
        await built.build(task, openaiRoute);
        await built.build(task, route);
        const openai = built.metricsOf(task, openaiRoute);
        const metrics = built.metricsOf(task, route);
        // Everything but what was sent (metrics.request: each protocol's own fields).
        const dropped = protocol.dropped(task);
        expect(comparable(metrics, route, dropped)).toEqual(comparable(openai, openaiRoute, dropped));
        expect(Object.keys(metrics.metrics).length).toBeGreaterThan(3);
        const sent = fakes()[i]!.stats.received;
        expect(sent.length).toBeGreaterThan(0);
        expect(sent.every((request) => request.apiKey === protocol.key)).toBe(true);
        // metrics.request says what each item's own fields held, never their text (a task's items may be
        // private).
        const prompt = protocol.prompt(sent[0]!.body);
        expect(JSON.stringify(metrics)).not.toContain(JSON.stringify(prompt).slice(1, -1).slice(-80));
        protocol.checkRun(task, metrics, openai, sent);
      },
    );

    it(`every body sent is valid against the request schema from ${protocol.reference} reference`, () => {
      const schema = JSON.parse(readFileSync(testData(...protocol.schema), "utf8")) as object;
      const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
      const bodies = fakes().flatMap((fake) => fake.stats.received.map((request) => request.body));
      expect(bodies.length).toBeGreaterThan(300);
      const invalid = bodies.filter((body) => !validate(body));
      expect(invalid.slice(0, 2).map((body) => (validate(body), validate.errors))).toEqual([]);
      protocol.checkVoiceBody(fakes()[0]!.stats.received[0]!.body);
    });

    protocol.cases(built);
  });
