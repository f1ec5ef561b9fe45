// requestKeysOf(text): the keys of a requests file's records, as the compiled code computes them (see
// request-keys.mjs). Shared with tests/model/request-keys.test.ts, so the figures compared are computed
// the same way.
import { readRecords } from "../../dist/src/contract/records.js";
import { requestBody } from "../../dist/stages/model.js";
import { openai, requestKey } from "../../dist/src/model/openai.js";
import { loadRoutes } from "../../dist/src/model/registry.js";
import { createHash } from "node:crypto";

/** The voice-command spec's model-stage fields, and models per route of registry/providers.yaml. */
export const PARAMS = { max_tokens: 800, temperature: 0, thinking: "off" };
export const MODELS = {
  local: ["qwen3-8b", "gpt-oss-20b"],
  openrouter: ["qwen/qwen3-8b"],
  openai: ["gpt-4.1", "gpt-5"],
};
const FORMATS = ["json_schema", "json_object", "none"];

/** One digest per route and model over every request's key in each format, so that a change of one route's
 *  bodies shows as that route's digest alone. A body the code refuses to send counts as its message. */
export async function requestKeysOf(text) {
  const routes = loadRoutes([]);
  const records = readRecords("requests", text);
  const keys = {};
  for (const [name, models] of Object.entries(MODELS))
    for (const model of models) {
      const route = routes.get(name);
      const p = { ...PARAMS, model: `${name}/${model}` };
      const lines = [];
      for (const request of records)
        for (const format of FORMATS)
          lines.push(`${request.id} ${format} ${keyOrRefusal(request, p, route, model, format)}`);
      keys[`${name}/${model}`] = createHash("sha256").update(lines.join("\n")).digest("hex");
    }
  return { params: PARAMS, models: MODELS, formats: FORMATS, requests: records.length, keys };
}

function keyOrRefusal(request, p, route, model, format) {
  try {
    return requestKey(route, requestBody({ protocol: openai, params: p, route, model }, request, format));
  } catch (e) {
    return `refused: ${e.message}`;
  }
}
