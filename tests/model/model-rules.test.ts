// The shipped openai route's per-model rules (registry/providers.yaml request.models), driven through the
// CLI against the fake server over real HTTP: what OpenAI's reasoning models take is what is sent
// (max_completion_tokens, their own thinking-off or lowest-effort fields), and a field a model takes only at
// another value that no rule deviates (an override's temperature 0 to gpt-5) is refused before anything is
// sent, at the spec's line (deviations: tests/model/deviations.test.ts).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { startFake, type Fake } from "../support/fake.js";

const { servers, projects } = cleanedAfterEach();
const KEY = { OPENAI_API_KEY: "sk-test-model-rules" };
const VC = "specs/voice-command.yaml";
const FAST = {
  concurrency: 8,
  retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 300 },
  max_failures_in_a_row: 1000,
};
/** The model stage's temperature line of the voice-command spec (gpt-5 takes only the default). */
const TEMPERATURE_LINE = "      temperature: { $spec: /request/temperature }\n";

/** A project whose routes.yaml is the shipped openai route (its request fields as shipped) at the fake. */
async function setup(): Promise<{ fake: Fake; p: Project }> {
  const fake = await startFake({ policy: "voice-command" });
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  const shipped = parseYaml(readFileSync(`${REPO}/registry/providers.yaml`, "utf8")).routes.openai;
  p.write("routes.yaml", stringifyYaml({ routes: { openai: { ...shipped, base_url: fake.url, ...FAST } } }));
  return { fake, p };
}

const build = (p: Project, model: string, spec = VC, more: string[] = []) =>
  p.run(["build", spec, "--model", model, "--registry", "routes.yaml", ...more], KEY);
const withoutTemperature = (text: string) => text.replace(TEMPERATURE_LINE, "");
const metricsOf = (p: Project, model: string) =>
  JSON.parse(p.read(`results/kor-surgical-robot-voice-command/${model.replace("/", "_")}/metrics.json`))
    .metrics as { request: Record<string, unknown> };

describe("the openai route sends what each model takes", () => {
  it("an override's temperature is refused at its line: deviate applies to the stage's fields", async () => {
    const { fake, p } = await setup();
    p.edit(VC, (t) =>
      t.replace(
        '      thinking: "off"\n',
        '      thinking: "off"\n      overrides: { gpt-5: { fields: { temperature: 0 } } }\n',
      ),
    );
    const stderr = await p.refuses(null, {
      args: ["build", VC, "--model", "openai/gpt-5", "--registry", "routes.yaml"],
    });
    expect(stderr).toMatch(
      /voice-command\.yaml:\d+:\d+: stages\.model\.params\.overrides\.gpt-5\.fields\.temperature/,
    );
    expect(stderr).toContain("model gpt-5 on route openai takes temperature only at 1");
    expect(fake.stats.requests).toBe(0);
  });

  it("gpt-5: max_completion_tokens and its lowest effort (minimal), no max_tokens", async () => {
    const { fake, p } = await setup();
    p.edit(VC, withoutTemperature);
    const r = await build(p, "openai/gpt-5");
    expect(r.exitCode, r.stderr).toBe(0);
    const bodies = fake.stats.received.map((x) => x.body);
    expect(bodies.length).toBeGreaterThan(0);
    for (const b of bodies) {
      expect(b.max_completion_tokens).toBe(800);
      expect(b).not.toHaveProperty("max_tokens");
      expect(b).not.toHaveProperty("temperature");
      expect(b.reasoning_effort).toBe("minimal");
    }
    expect(metricsOf(p, "openai/gpt-5").request).toMatchObject({
      max_completion_tokens: 800,
      reasoning_effort: "minimal",
    });
  });

  it.each([
    ["openai/gpt-5.1", "none"],
    ["openai/gpt-5-mini", "minimal"], // "gpt-5.*" does not match it: the dot is a dot
    ["openai/o3-mini", "low"],
  ])("%s: thinking off is sent as reasoning_effort %s", async (model, effort) => {
    const { fake, p } = await setup();
    p.edit(VC, withoutTemperature);
    const r = await build(p, model, VC, ["--limit", "2"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.received.length).toBeGreaterThan(0);
    for (const { body } of fake.stats.received) expect(body.reasoning_effort).toBe(effort);
  });

  it("a model without a rule keeps the spec's temperature, under max_completion_tokens", async () => {
    const { fake, p } = await setup();
    const r = await build(p, "openai/gpt-4.1", VC, ["--limit", "2"]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const { body } of fake.stats.received) {
      expect(body).toMatchObject({ temperature: 0, max_completion_tokens: 800 });
      expect(body).not.toHaveProperty("max_tokens");
      expect(body).not.toHaveProperty("reasoning_effort");
    }
  });

  it("refuses a thinking-off task on gpt-5-pro with the reason, at the spec's thinking line", async () => {
    const { fake, p } = await setup();
    p.edit(VC, withoutTemperature);
    const stderr = await p.refuses(null, {
      args: ["build", VC, "--model", "openai/gpt-5-pro", "--registry", "routes.yaml"],
    });
    expect(stderr).toMatch(/specs\/voice-command\.yaml:\d+:\d+: stages\.model\.params\.thinking/);
    expect(stderr).toContain("cannot run a task with thinking off: it reasons at high effort only");
    expect(fake.stats.requests).toBe(0);
  });
});

describe("per-model rules are checked where they are written", () => {
  it.each([
    ["token_field: max_new_tokens", /token_field: must be one of \["max_tokens","max_completion_tokens"\]/],
    ['models: { "gpt-5*": { fixd: { temperature: 1 } } }', /unknown key `fixd`.*known keys here: .*fixed/s],
    ['models: { "gpt-5*": { no_thinking_off: "" } }', /no_thinking_off: must NOT have fewer than 1/],
  ])("refuses %s in a registry with its file:line:column", async (line, named) => {
    const p = new Project();
    projects.push(p);
    p.write(
      "routes.yaml",
      "routes:\n  r:\n    base_url: http://127.0.0.1:9/v1\n    request:\n" +
        `      thinking_off: {}\n      ${line}\n`,
    );
    const stderr = await p.refuses(null, {
      args: ["build", VC, "--model", "r/gpt-5", "--registry", "routes.yaml"],
    });
    expect(stderr).toMatch(/routes\.yaml:6:\d+/);
    expect(stderr).toMatch(named);
  });
});
