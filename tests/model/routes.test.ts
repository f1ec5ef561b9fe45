// The routes of a command travel as one value, read on first use and then kept; the OpenAI wire format is a
// Protocol of src/model whose refusals the model stage turns into its own errors.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandRoutes, RouteRegistry, routeKeyFields } from "../../src/model/routes.js";
import { openai } from "../../src/model/openai.js";
import { UnsendableRequest } from "../../src/model/protocol.js";
import { DiagnosticError, StageError } from "../../src/errors.js";
import { requestBody } from "../../stages/model.js";

const dir = mkdtempSync(join(tmpdir(), "medbench-routes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function registryFile(name: string, baseUrl: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `routes:\n  mine:\n    base_url: ${baseUrl}\n    request:\n      extra: { seed: 1 }\n`,
  );
  return file;
}

describe("a command's routes", () => {
  it("reads nothing until a route is asked for, and a bad file fails each time it is asked", () => {
    const routes = new RouteRegistry([join(dir, "missing.yaml")]);
    expect(routes.given).toEqual([join(dir, "missing.yaml")]);
    expect(routes.files).toEqual(["registry/providers.yaml", join(dir, "missing.yaml")]);
    expect(() => routes.check()).toThrow(DiagnosticError);
    expect(() => routes.get("local")).toThrow(/cannot read the route registry/);
  });

  it("reads its files once: a file changed later is not read again by the same value", () => {
    const file = registryFile("routes.yaml", "http://127.0.0.1:9/v1");
    const routes = new RouteRegistry([file]);
    expect(routes.get("mine")?.base_url).toBe("http://127.0.0.1:9/v1");
    registryFile("routes.yaml", "http://127.0.0.1:10/v1");
    expect(routes.get("mine")?.base_url).toBe("http://127.0.0.1:9/v1");
    expect(new RouteRegistry([file]).get("mine")?.base_url).toBe("http://127.0.0.1:10/v1");
    expect(routes.has("local")).toBe(true); // the shipped registry's routes too
    expect(routes.names()).toContain("mine");
    expect(routes.list().map((route) => route.name)).toEqual(routes.names());
  });

  it("is one value per command's --registry option, shared by its check and its stages", () => {
    const given = [registryFile("shared.yaml", "http://127.0.0.1:9/v1")];
    expect(commandRoutes(given)).toBe(commandRoutes(given));
    expect(commandRoutes([...given])).not.toBe(commandRoutes(given));
  });

  it("keys a route by its fields and the names of its headers, never their values", () => {
    const route = new RouteRegistry([registryFile("keyed.yaml", "http://127.0.0.1:9/v1")]).get("mine")!;
    expect(routeKeyFields({ ...route, headers: { "x-key": "secret" } })).toEqual({
      base_url: "http://127.0.0.1:9/v1",
      api_key_env: null,
      header_names: ["x-key"],
      request: { extra: { seed: 1 } },
    });
  });
});

describe("the OpenAI protocol", () => {
  const route = new RouteRegistry([registryFile("protocol.yaml", "http://127.0.0.1:9/v1")]).get("mine")!;
  const request = { messages: [{ role: "user", content: "hi" }] };

  it("lays the route's fields over the body, and keys the bytes it sends", () => {
    const body = openai.body(request, { max_tokens: 5 }, route, "m", "json_object");
    expect(body).toEqual({
      model: "m",
      messages: request.messages,
      max_tokens: 5,
      seed: 1,
      response_format: { type: "json_object" },
    });
    const { payload, key } = openai.serialise(route, body);
    expect(JSON.parse(payload.toString("utf8"))).toEqual(body);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a body the route cannot send; the model stage says so as a stage error with a fix", () => {
    const thinkingOff = () => openai.body(request, { thinking: "off" }, route, "m", "none");
    expect(thinkingOff).toThrow(UnsendableRequest);
    const viaStage = () =>
      requestBody(
        { protocol: openai, params: { thinking: "off" }, route, model: "m" },
        { id: "a", meta: {}, messages: [{ role: "user", content: "hi" }] },
        "none",
      );
    expect(viaStage).toThrow(StageError);
    expect(viaStage).toThrow(/does not declare how to switch thinking off/);
  });

  it("reads a reply's text and leaves out what the server did not send", () => {
    const reply = openai.reply({
      choices: [{ message: { content: "<think>x</think>ok" }, finish_reason: "stop" }],
    });
    expect(reply).toEqual({
      text: "<think>x</think>ok",
      finish_reason: "stop",
      reasoning: false,
      think: true,
    });
  });
});
