// The three tasks built over Google's Gemini API (protocol: gemini) against the fake Gemini server, driven
// through the CLI: each gives the same metrics as the same answers over OpenAI's format (the fake OpenAI
// server with the same policy); every body sent is valid against the request schema written from Google's
// reference (tests/data/gemini-request/); and a model that cannot switch thinking off runs on the shipped
// route at its lowest budget, the deviation on record, its thought parts and tokens in the thinking audit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";
import type { Fake } from "../support/fake.js";
import { comparable, protocolRig, TASKS, type ProtocolRig, type Task } from "../support/three-tasks.js";
import { geminiRoute, startGeminiFake, type GeminiFake } from "../support/fake-gemini.js";

const Ajv = createRequire(import.meta.url)("ajv") as typeof import("ajv").default;
const REQUEST_SCHEMA = JSON.parse(
  readFileSync(testData("gemini-request", "generate-content-request.schema.json"), "utf8"),
) as object;
const KEY = "gm-test-key-0123456789";
const MODEL = "gemini-2.5-flash";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- metrics.json, read field by field
type Metrics = any;

/** A run's numbers as comparable() gives them. A task that does not switch thinking off (MTSamples) leaves
 *  Gemini 2.5 Flash to think as it does by default, so its thinking audits differ by right: left out for it
 *  (`thinking` false). */
const scored = (metrics: Metrics, route: string, thinking: boolean): unknown =>
  comparable(metrics, route, thinking ? [] : ["thinking_audit"]);

describe("the three tasks over the Gemini API", () => {
  const openaiFakes: Fake[] = [];
  const geminiFakes: GeminiFake[] = [];
  let rig: ProtocolRig<GeminiFake>;
  let p: Project;
  beforeAll(async () => {
    rig = await protocolRig((policy) => startGeminiFake({ policy, apiKey: KEY }), geminiRoute, "gm");
    p = rig.p;
    openaiFakes.push(...rig.openai);
    geminiFakes.push(...rig.other);
  });
  afterAll(async () => {
    await rig.close();
  });

  const build = async (task: Task, route: string, model = MODEL) => {
    const judge = task.policy === "mtsamples" ? ["--judge", `${route}/${model}`] : [];
    const args = ["build", task.spec, "--model", `${route}/${model}`, ...judge, ...task.args];
    const run = await p.run([...args, "--registry", "routes.yaml", "--json"], { GEMINI_API_KEY: KEY });
    expect(run.exitCode, run.stderr).toBe(task.incomplete && model === MODEL ? 1 : 0);
    return run;
  };
  const metricsOf = (task: Task, route: string, model = MODEL): Metrics =>
    JSON.parse(p.read(`results/${task.slug}/${route}_${model}${task.folder}/metrics.json`));

  it.each(TASKS.map((task, i) => [task.spec, i] as const))(
    "%s: the same metrics as the same answers over OpenAI's format",
    async (_spec, i) => {
      const task = TASKS[i]!;
      await build(task, `oa-${task.policy}`);
      await build(task, `gm-${task.policy}`);
      const openai = metricsOf(task, `oa-${task.policy}`);
      const gemini = metricsOf(task, `gm-${task.policy}`);
      // Everything but what was sent (metrics.request: each protocol's own fields).
      const thinking = task.policy !== "mtsamples";
      expect(scored(gemini, `gm-${task.policy}`, thinking)).toEqual(
        scored(openai, `oa-${task.policy}`, thinking),
      );
      expect(Object.keys(gemini.metrics).length).toBeGreaterThan(3);
      // metrics.request says what each item's own fields held, never their text (a task's items may be
      // private).
      expect(gemini.metrics.request.contents).toMatch(/^per item: 1 contents \(user\)$/);
      const prompt = String(geminiFakes[i]!.stats.received[0]!.body.contents[0].parts[0].text);
      expect(JSON.stringify(gemini)).not.toContain(JSON.stringify(prompt).slice(1, -1).slice(-80));
      const sent = geminiFakes[i]!.stats.received;
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((request) => request.apiKey === KEY && request.model === MODEL)).toBe(true);
    },
  );

  it("every body sent is valid against the request schema from Google's reference", () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(REQUEST_SCHEMA);
    const bodies = geminiFakes.flatMap((fake) => fake.stats.received.map((request) => request.body));
    expect(bodies.length).toBeGreaterThan(300);
    const invalid = bodies.filter((body) => !validate(body));
    expect(invalid.slice(0, 2).map((body) => (validate(body), validate.errors))).toEqual([]);
    // voice-command's reply schema went as responseSchema; thinking went off with budget 0.
    const voice = geminiFakes[0]!.stats.received[0]!.body;
    expect(voice.generationConfig.responseMimeType).toBe("application/json");
    expect(voice.generationConfig.responseSchema.type).toBe("OBJECT");
    expect(voice.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(voice.systemInstruction.parts[0].text.length).toBeGreaterThan(0);
  });

  it("2.5 Pro on the shipped route: lowest budget, the deviation on record, thoughts audited", async () => {
    // The shipped `gemini` route, sent to the fake by GOOGLE_GEMINI_BASE_URL as the SDK would be.
    const fake = geminiFakes[0]!;
    const env = { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: fake.url };
    const run = await p.run(["build", "specs/voice-command.yaml", "--model", "gemini/gemini-2.5-pro"], env);
    expect(run.exitCode, run.stderr).toBe(0);
    const metrics = metricsOf(TASKS[0]!, "gemini", "gemini-2.5-pro");
    const sent = fake.stats.received.filter((request) => request.model === "gemini-2.5-pro");
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent)
      expect(request.body.generationConfig.thinkingConfig).toEqual({
        thinkingBudget: 128,
        includeThoughts: true,
      });
    expect(metrics.deviations).toEqual([
      {
        field: "thinking",
        spec: "off",
        sent: { generationConfig: { thinkingConfig: { thinkingBudget: 128, includeThoughts: true } } },
        rule: "gemini gemini-2.5-pro* reasoning_low",
      },
    ]);
    expect(run.stderr).toMatch(/deviation from the spec: thinking: the spec asks "off", sent/);
    const audit = metrics.metrics.thinking_audit;
    expect(audit.thinking_off).toBe(false);
    // Items of one body share its one request (its reply recalled from the memo): every item's reply counted.
    expect(audit.replies_with_reasoning_field).toBeGreaterThanOrEqual(sent.length);
    expect(audit.replies_with_reasoning_tokens).toBe(audit.replies_with_reasoning_field);
  });
});
