// Every body medbench sends for the three tasks, through each route it ships or shows
// (registry/providers.yaml, examples/routes.yaml, the init template), in each response format, is valid
// against a schema written from OpenAI's CreateChatCompletionRequest (tests/data/openai-request/); the
// openai route sends nothing the spec deprecates; and the fields OpenAI does not define are exactly those
// docs/model-requests.md lists per route.
import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { REPO, testData } from "../support/helpers.js";
import { exampleRoutes, templateRoutes } from "../support/shipped-routes.js";
import { readRecords, type RequestRecord } from "../../src/contract/records.js";
import { requestBody, type Params } from "../../stages/model.js";
import { openai } from "../../src/model/openai.js";
import { loadRoutes, type Route } from "../../src/model/registry.js";
import type { Json } from "../../src/util/json.js";

const { projects } = cleanedAfterEach();
// ajv is CommonJS: required as such, as the spec validators are compiled with it.
const Ajv = createRequire(import.meta.url)("ajv") as typeof import("ajv").default;
const SCHEMA = JSON.parse(
  readFileSync(testData("openai-request", "chat-completion-request.schema.json"), "utf8"),
) as { properties: Record<string, { deprecated?: boolean }> };
const FORMATS = ["json_schema", "json_object", "none"] as const;

/** Route label (as docs/model-requests.md names it) -> its registry name here and the models sent. */
const ROUTES: Record<string, { name: string; models: string[] }> = {
  local: { name: "local", models: ["qwen3-8b", "gpt-oss-20b"] },
  openrouter: { name: "openrouter", models: ["qwen/qwen3-8b", "openai/gpt-oss-20b"] },
  openai: { name: "openai", models: ["gpt-4.1", "gpt-oss-20b", "gpt-5", "gpt-5.1", "o3"] },
  "examples vllm": { name: "examples_vllm", models: ["qwen3-8b", "gpt-oss-20b"] },
  "init vllm": { name: "init_vllm", models: ["qwen3-8b", "gpt-oss-20b"] },
  "init sglang": { name: "init_sglang", models: ["qwen3-8b", "gpt-oss-20b"] },
  "init ollama": { name: "init_ollama", models: ["qwen3:8b", "gpt-oss:20b"] },
  "init openrouter": { name: "init_openrouter", models: ["qwen/qwen3-8b", "openai/gpt-oss-20b"] },
  "init openai": { name: "init_openai", models: ["gpt-4.1", "gpt-oss-20b", "gpt-5", "gpt-5.1", "o3"] },
};

/** The model stage's parameters as each spec writes them ($spec values resolved, the model aside). */
function stageParams(spec: string): Params {
  const doc = parseYaml(readFileSync(`${REPO}/${spec}`, "utf8")) as {
    spec: Json;
    stages: { model: { params: Record<string, Json> } };
  };
  const resolve = (v: Json): Json => {
    const ref = (v as { $spec?: string } | null)?.$spec;
    if (typeof ref !== "string") return v;
    return ref
      .split("/")
      .slice(1)
      .reduce<Json>((at, k) => (at as Record<string, Json>)[k]!, doc.spec);
  };
  const params = Object.fromEntries(
    Object.entries(doc.stages.model.params)
      .filter(([k]) => k !== "model")
      .map(([k, v]) => [k, resolve(v)]),
  );
  return params as unknown as Params;
}

/** Every body of a task's requests through every route, model and format it can be sent in. */
function bodies(requests: RequestRecord[], params: Params, routes: Map<string, Route>) {
  const out: { label: string; model: string; body: Record<string, Json> }[] = [];
  for (const [label, { name, models }] of Object.entries(ROUTES))
    for (const model of models) {
      const route = routes.get(name)!;
      // The spec as it is: a model that takes temperature only at 1 has it left out by its route's rule
      // (deviate: omit; tests/model/deviations.test.ts).
      const p = { ...params, model: `${name}/${model}` };
      for (const req of requests)
        for (const format of FORMATS)
          out.push({
            label,
            model,
            body: requestBody({ protocol: openai, params: p, route, model }, req, format),
          });
    }
  return out;
}

/** docs/model-requests.md's table of non-OpenAI fields: field -> the route labels that send it. */
function documentedFields(): Map<string, Set<string>> {
  const doc = readFileSync(`${REPO}/docs/model-requests.md`, "utf8");
  const section = doc.split("## Non-OpenAI fields of the shipped routes")[1]!.split("\n## ")[0]!;
  const out = new Map<string, Set<string>>();
  for (const row of section.split("\n").filter((l) => /^\| `/.test(l))) {
    const [field, sentBy] = row
      .split("|")
      .slice(1, 3)
      .map((c) => c.trim());
    out.set(field!.replace(/`/g, ""), new Set(sentBy!.split(",").map((s) => s.trim())));
  }
  return out;
}

describe("request bodies against OpenAI's request spec", () => {
  const sent: { label: string; model: string; body: Record<string, Json> }[] = [];
  beforeAll(async () => {
    const p = new Project();
    projects.push(p);
    const registry = Object.fromEntries(
      Object.entries({ examples: exampleRoutes(), init: templateRoutes() }).flatMap(([from, routes]) =>
        Object.entries(routes).map(([name, route]) => [`${from}_${name}`, route]),
      ),
    );
    p.write("routes.yaml", stringifyYaml({ routes: registry }));
    const routes = loadRoutes([p.path("routes.yaml")]);
    const builds: [string, string[], () => string][] = [
      [
        "specs/voice-command.yaml",
        [],
        () => p.read(`results/kor-surgical-robot-voice-command/medbench_prior/requests.jsonl`),
      ],
      [
        "specs/mtsamples.yaml",
        ["--data-dir", testData("mtsamples_processed")],
        () => p.read("results/mtsamples-replicate/medbench_impression/requests.jsonl"),
      ],
      ["specs/note-errors.yaml", ["--configurations", "all"], () => noteErrorsRequests(p)],
    ];
    for (const [spec, args, requestsText] of builds) {
      const r = await p.run(["build", spec, ...args, "--quiet"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const requests = readRecords("requests", requestsText()) as RequestRecord[];
      sent.push(...bodies(requests, stageParams(spec), routes));
    }
  });

  it("every body is valid, and the openai route sends nothing the spec deprecates", () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(SCHEMA);
    const invalid = sent.filter(({ body }) => !validate(body));
    expect(sent.length).toBeGreaterThan(1000);
    expect(
      invalid
        .slice(0, 3)
        .map((x) => `${x.label} ${x.model}: ${JSON.stringify(validate(x.body) || validate.errors)}`),
    ).toEqual([]);
    // A reasoning model is sent no temperature or top_p but its only value, 1.
    for (const { model, body } of sent.filter((x) => /^(gpt-5|o\d)/.test(x.model)))
      for (const field of ["temperature", "top_p"]) expect(body[field] ?? 1, `${model} ${field}`).toBe(1);
    const deprecated = Object.keys(SCHEMA.properties).filter((k) => SCHEMA.properties[k]!.deprecated);
    for (const { label, body } of sent.filter((x) => x.label.endsWith("openai")))
      for (const field of deprecated) expect(body, label).not.toHaveProperty(field);
  });

  it("the fields OpenAI does not define are those docs/model-requests.md lists for each route", () => {
    const found = new Map<string, Set<string>>();
    for (const { label, body } of sent)
      for (const field of Object.keys(body).filter((k) => !(k in SCHEMA.properties)))
        (found.get(field) ?? found.set(field, new Set()).get(field)!).add(label);
    const sorted = (m: Map<string, Set<string>>) =>
      Object.fromEntries([...m].map(([k, v]) => [k, [...v].sort()]).sort());
    expect(sorted(found)).toEqual(sorted(documentedFields()));
  });
});

/** The note-errors requests (every configuration): the prompts stage's output named in medbench.lock. */
function noteErrorsRequests(p: Project): string {
  const lock = JSON.parse(p.read("medbench.lock")) as {
    specs: Record<
      string,
      { builds: Record<string, { stages: { prompts: { outputs: { requests: string } } } }> }
    >;
  };
  const build = "configurations=all limit=null model=medbench/prior subset=null trained_on=null";
  const h = lock.specs["specs/note-errors.yaml"]!.builds[build]!.stages.prompts.outputs.requests;
  return p.read(`cache/objects/${h.slice(0, 2)}/${h}`);
}
