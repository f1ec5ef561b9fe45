// requestKeysOf(text): the keys of a requests file's records, as the compiled code computes them (see
// request-keys.mjs). Shared with tests/request-keys.test.ts, so the figures compared are computed the same way.
import { readRecords } from "../../dist/src/contract/records.js";
import { requestBody, requestKey } from "../../dist/stages/model.js";
import { loadRoutes } from "../../dist/src/model/registry.js";
import { createHash } from "node:crypto";

/** The voice-command spec's model-stage fields, and a model per route of registry/providers.yaml. */
export const PARAMS = { max_tokens: 800, temperature: 0, thinking: "off" };
export const MODELS = {
  local: ["qwen3-8b", "gpt-oss-20b"],
  openrouter: ["qwen/qwen3-8b"],
  openai: ["gpt-5"],
};
const FORMATS = ["json_schema", "json_object", "none"];

export async function requestKeysOf(text) {
  const routes = loadRoutes([]);
  const keys = {};
  for (const request of readRecords("requests", text)) {
    const all = [];
    for (const [name, models] of Object.entries(MODELS))
      for (const model of models)
        for (const format of FORMATS) {
          const p = { ...PARAMS, model: `${name}/${model}` };
          const route = routes.get(name);
          all.push(
            `${name}/${model} ${format} ${requestKey(route, requestBody(request, p, route, model, format))}`,
          );
        }
    // One digest per request of its keys (every route, model and format, in this order): any key changed
    // changes it, and the file stays small.
    keys[request.id] = createHash("sha256").update(all.join("\n")).digest("hex");
  }
  return { params: PARAMS, models: MODELS, formats: FORMATS, keys };
}
