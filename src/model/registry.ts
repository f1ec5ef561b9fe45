// Model routes: registry/providers.yaml, plus any --registry files (later files override earlier routes).
import { readFileSync } from "../util/builtins.js";
import { resolve } from "node:path";
import { DiagnosticError } from "../spec/diagnostic.js";
import { parseSourceDoc } from "../spec/document.js";
import { checkSchema, REGISTRY_SCHEMA } from "../spec/schema.js";
import { installRoot } from "../util/paths.js";
import { consult } from "../util/consulted.js";
import type { Json } from "../util/json.js";

export interface Route {
  name: string;
  base_url: string;
  api_key_env?: string | null;
  headers?: Record<string, string>;
  concurrency: number;
  /** One try's limit; retry.max_total_s is the whole request's deadline, its tries and waits included. */
  timeout_s: number;
  retry: { max_attempts: number; base_ms: number; max_ms: number; max_total_s: number };
  /** Requests failed in a row (no answer within their deadline, or the key refused) that stop the stage. */
  max_failures_in_a_row: number;
  request: {
    thinking_off?: Record<string, Json>;
    /** For models that cannot switch thinking off (e.g. gpt-oss): the lowest reasoning effort. */
    reasoning_low?: Record<string, Json>;
    reasoning_low_models?: string[]; // substrings of model names that take reasoning_low
    schema_mode?: Record<string, Json>;
    extra?: Record<string, Json>;
  };
}

const DEFAULTS = {
  concurrency: 4,
  timeout_s: 120,
  retry: { max_attempts: 6, base_ms: 500, max_ms: 30_000, max_total_s: 300 },
  max_failures_in_a_row: 8,
};

export function loadRoutes(extraFiles: string[]): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const file of [resolve(installRoot(), "registry/providers.yaml"), ...extraFiles]) {
    consult(file); // a route's fields are part of the model and judge stages' keys
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new DiagnosticError([
        {
          file,
          message: `cannot read the route registry (${(e as NodeJS.ErrnoException).code})`,
          fix: "check the --registry path",
        },
      ]);
    }
    // Positions for every mistake: the registry is checked against registry/registry.schema.json.
    const src = parseSourceDoc(bytes, file);
    checkSchema(src.value, () => src, REGISTRY_SCHEMA);
    const value = src.value as { routes: Record<string, Partial<Route>> | null };
    for (const [name, r] of Object.entries(value.routes ?? {})) {
      if (!r?.base_url) continue; // the schema requires it
      routes.set(name, {
        name,
        base_url: r.base_url,
        api_key_env: r.api_key_env ?? null,
        headers: r.headers ?? {},
        concurrency: r.concurrency ?? DEFAULTS.concurrency,
        timeout_s: r.timeout_s ?? DEFAULTS.timeout_s,
        retry: { ...DEFAULTS.retry, ...(r.retry ?? {}) },
        max_failures_in_a_row: r.max_failures_in_a_row ?? DEFAULTS.max_failures_in_a_row,
        request: r.request ?? {},
      });
    }
  }
  return routes;
}

export function splitModel(model: string): { route: string; model: string } {
  const i = model.indexOf("/");
  if (i <= 0 || i === model.length - 1)
    throw new DiagnosticError([
      {
        file: "--model",
        message: `model ${model} is not ROUTE/MODEL`,
        fix: "name a route of registry/providers.yaml and the model, e.g. --model local/qwen3-8b",
      },
    ]);
  return { route: model.slice(0, i), model: model.slice(i + 1) };
}
