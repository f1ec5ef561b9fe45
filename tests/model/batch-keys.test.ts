// How a build sends its requests (one by one, or as provider batches) is no part of what a model or judge
// stage computes: a reply is stored the same whichever way it came. So no batch module is in their keys,
// whatever the route's protocol, and editing one re-keys no stage.
import { describe, expect, it } from "vitest";
import { RouteRegistry } from "../../src/model/routes.js";
import { routeIdentity } from "../../stages/model.js";
import { compiled } from "../support/stage-code.js";
import { REPO } from "../support/helpers.js";
import type { Json } from "../../src/util/json.js";

const isBatchModule = (file: string) => /batch/.test(file);

describe("the batch modules", () => {
  it.each(["model", "judge"])("are in no %s stage's key, nor in its route's identity", (kind) => {
    const { stageCode, kinds, task } = compiled("voice-command");
    const params: Json =
      kind === "judge" ? { model: "openai/gpt-4o", judges: {} } : { model: "openai/gpt-4o" };
    const own = stageCode(REPO, kinds.get(kind)!, params, { name: "", module: task });
    expect(Object.keys(own.code).length).toBeGreaterThan(0);
    expect(Object.keys(own.code).filter(isBatchModule)).toEqual([]);
    const ctx = { options: { routes: new RouteRegistry([]) } } as never;
    for (const model of ["openai/gpt-4o", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"]) {
      const id = routeIdentity(ctx, model) as { protocol: { code: Record<string, string> } };
      expect(Object.keys(id.protocol.code).filter(isBatchModule), model).toEqual([]);
    }
  });
});
