// gpt-oss cannot switch reasoning off, and its prompt ignores enable_thinking (vLLM renders it without the
// chat template; Ollama ignores think false for it): every shipped and example route sends its lowest effort
// (reasoning_effort low) instead, so that the specs' "low" is what runs. Driven through the CLI against the
// fake server: the example registry's vllm route and the init template's vllm, sglang and ollama routes.
import { describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { startFake } from "../support/fake.js";
import { exampleRoutes, shippedRoutes, templateRoutes, type Routes } from "../support/shipped-routes.js";

const { servers, projects } = cleanedAfterEach();

const KWARGS_OFF = { chat_template_kwargs: { enable_thinking: false } };
const CASES: [string, string, () => Routes, Record<string, unknown>][] = [
  ["examples/routes.yaml", "vllm", exampleRoutes, KWARGS_OFF],
  ["the init template", "vllm", templateRoutes, KWARGS_OFF],
  ["the init template", "sglang", templateRoutes, KWARGS_OFF],
  ["the init template", "ollama", templateRoutes, { reasoning_effort: "none" }],
];

describe("gpt-oss runs at its lowest effort on every route", () => {
  it.each(CASES)("%s, route %s", async (_file, name, routes, thinkingOff) => {
    const fake = await startFake({ policy: "voice-command" });
    servers.push(fake);
    const p = new Project();
    projects.push(p);
    const route = { ...routes()[name], base_url: fake.url, max_failures_in_a_row: 1000 };
    p.write("routes.yaml", stringifyYaml({ routes: { [name]: route } }));
    const sent = async (model: string) => {
      const from = fake.stats.received.length;
      const args = ["build", "specs/voice-command.yaml", "--model", `${name}/${model}`, "--limit", "2"];
      const r = await p.run([...args, "--registry", "routes.yaml"]);
      expect(r.exitCode, r.stderr).toBe(0);
      return fake.stats.received.slice(from).map((x) => x.body);
    };
    const oss = await sent("gpt-oss-20b");
    expect(oss.length).toBeGreaterThan(0);
    for (const body of oss) {
      expect(body.reasoning_effort).toBe("low");
      expect(body).not.toHaveProperty("chat_template_kwargs");
    }
    const metrics = JSON.parse(
      p.read(`results/kor-surgical-robot-voice-command/${name}_gpt-oss-20b.partial/metrics.json`),
    );
    expect(metrics.metrics.request.reasoning_effort).toBe("low");
    // Other models still switch thinking off with the route's own fields.
    for (const body of await sent("qwen3-8b")) expect(body).toMatchObject(thinkingOff);
  });

  it("the init template's openrouter and openai routes are the shipped ones", () => {
    const template = templateRoutes();
    const shipped = shippedRoutes();
    expect(template.openrouter).toEqual(shipped.openrouter);
    expect(template.openai).toEqual(shipped.openai);
  });
});
