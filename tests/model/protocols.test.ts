// A route names its protocol (`protocol:` in a registry file, default openai), and a protocol's code is in
// the key of the model stages whose route speaks it, and only those: the model stage's own code reaches no
// protocol module, and a route's identity holds its protocol's code and no transport.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RouteRegistry } from "../../src/model/routes.js";
import { PROTOCOL_NAMES } from "../../src/model/protocols.js";
import { DiagnosticError } from "../../src/errors.js";
import { routeIdentity } from "../../stages/model.js";
import { compiled } from "../support/stage-code.js";
import { REPO } from "../support/helpers.js";
import type { Json } from "../../src/util/json.js";

const dir = mkdtempSync(join(tmpdir(), "medbench-protocols-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function registry(name: string, route: string): RouteRegistry {
  const file = join(dir, name);
  writeFileSync(file, `routes:\n  mine:\n    base_url: http://127.0.0.1:9/v1\n${route}`);
  return new RouteRegistry([file]);
}

/** The identity a model stage of ROUTE/MODEL records for its route. */
const identityOf = (routes: RouteRegistry, model: string) =>
  routeIdentity({ options: { routes } } as never, model) as {
    protocol: { name: string; code: Record<string, string> };
  } & Record<string, unknown>;

describe("a route's protocol", () => {
  it("is none of the model stage's own code: each protocol is loaded by the route that names it", () => {
    const { stageCode, kinds, task } = compiled("voice-command");
    for (const kind of ["model", "judge"]) {
      const params: Json = kind === "model" ? { model: "local/x" } : { judges: ["local/x"] };
      const code = Object.keys(stageCode(REPO, kinds.get(kind)!, params, { name: "", module: task }).code);
      expect(code).toContain(`dist/stages/${kind}.js`);
      expect(code.filter((file) => /model\/(openai|protocols|client|http)\.js$/.test(file))).toEqual([]);
    }
  });

  it("is in the route's identity: its name and its code, no transport", () => {
    const id = identityOf(new RouteRegistry([]), "local/qwen3-8b");
    expect(id.protocol.name).toBe("openai");
    const files = Object.keys(id.protocol.code);
    expect(files).toContain("dist/src/model/openai.js");
    expect(files.filter((file) => /model\/(client|http|protocols)\.js$/.test(file))).toEqual([]);
    expect(identityOf(new RouteRegistry([]), "medbench/prior")).toBeNull();
  });

  it("defaults to openai: a route that says so is keyed as one that does not", () => {
    const plain = identityOf(registry("plain.yaml", ""), "mine/m");
    const named = identityOf(registry("named.yaml", "    protocol: openai\n"), "mine/m");
    expect(named).toEqual(plain);
  });

  it("refuses a protocol it does not know at its file:line:column, naming those it knows", () => {
    const routes = registry("bad.yaml", "    protocol: antropic\n");
    let error: unknown;
    try {
      routes.check();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DiagnosticError);
    const [diagnostic] = (error as DiagnosticError).diagnostics;
    expect(diagnostic).toMatchObject({ file: join(dir, "bad.yaml"), line: 4, column: 15 });
    expect(diagnostic!.message).toContain(JSON.stringify(PROTOCOL_NAMES));
  });

  it("names in the registry schema exactly the protocols registered", () => {
    const schema = JSON.parse(readFileSync(join(REPO, "registry/registry.schema.json"), "utf8")) as {
      definitions: { route: { properties: { protocol: { enum: string[] } } } };
    };
    expect(schema.definitions.route.properties.protocol.enum).toEqual([...PROTOCOL_NAMES]);
  });
});
