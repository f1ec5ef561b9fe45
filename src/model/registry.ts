// Model routes: registry/providers.yaml, plus any --registry files (later files override earlier routes).
import { resolve } from "node:path";
import { readFileSync } from "../util/builtins.js";
import { sha256Hex } from "../hash/sha256.js";
import { DiagnosticError, type Diagnostic } from "../errors.js";
import {
  diagnosticAt,
  nonFiniteNumbers,
  parseSourceDoc,
  readDocumentBytes,
  type SourceDoc,
} from "../specfile/document.js";
import { REDACTED, urlUserinfo } from "./redact.js";
import { publicUrl, queryValues } from "./url-secrets.js";
import { checkSchema, REGISTRY_SCHEMA } from "../specfile/schema.js";
import { installRoot } from "../util/paths.js";
import { consult, consultEnv } from "../util/consulted.js";
import { factsOf } from "../hash/code-memo.js";
import { escapePointer, type Json } from "../util/json.js";
import type { Price } from "./price.js";

export interface Route {
  name: string;
  /** The wire protocol it speaks (src/model/protocols.ts); absent: OpenAI's chat completions. */
  protocol?: string;
  /** The URL as keys, records and messages show it: each query value replaced by [redacted]. */
  base_url: string;
  /** The URL as written, when its query carries values: for the HTTP client alone, never written. */
  base_url_with_secrets?: string;
  /** More servers of the same model (src/model/replicas.ts), shown as base_url is; keys name base_url
   *  alone. */
  replicas?: string[];
  replicas_with_secrets?: string[];
  api_key_env?: string | null;
  /** The variable whose value, when set, replaces base_url (OPENAI_BASE_URL, as openai-node reads it). */
  base_url_env?: string | null;
  headers?: Record<string, string>;
  concurrency: number;
  /** One try's limit; retry.max_total_s is the whole request's deadline, its tries and waits included. */
  timeout_s: number;
  retry: { max_attempts: number; base_ms: number; max_ms: number; max_total_s: number };
  /** The most requests and estimated tokens the route sends a minute (src/model/pacer.ts); none: no cap. */
  requests_per_minute?: number | null;
  tokens_per_minute?: number | null;
  /** US dollars per million tokens, per model name pattern (src/model/price.ts); in no key. */
  price?: Record<string, Price>;
  /** Send the model and judge stages' requests as provider batches by default (build --batch). */
  batch?: boolean;
  /** Requests failed in a row (no answer within their deadline, or the key refused) that stop the stage. */
  max_failures_in_a_row: number;
  /** The largest reply body read, in MiB: past it a try fails before the body is held whole. */
  max_reply_mb: number;
  request: {
    thinking_off?: Record<string, Json>;
    /** For models that cannot switch thinking off (e.g. gpt-oss): the lowest reasoning effort. */
    reasoning_low?: Record<string, Json>;
    reasoning_low_models?: string[]; // substrings of model names that take reasoning_low
    schema_mode?: Record<string, Json>;
    extra?: Record<string, Json>;
    /** The body field the spec's max_tokens is sent as (OpenAI's reasoning models refuse max_tokens). */
    token_field?: "max_tokens" | "max_completion_tokens";
    /** Per-model rules by name pattern (`*` any run of characters); the first that matches applies. */
    models?: Record<string, ModelRule>;
  };
}

/** What one model (or family, by pattern) of a route takes that the route's other models do not. */
export interface ModelRule {
  token_field?: "max_tokens" | "max_completion_tokens";
  /** Fields the model takes only at these values: another value in a body is refused before sending,
   *  unless `deviate` says how the model is sent a spec's other value. */
  fixed?: Record<string, Json>;
  /** How a spec's other value of a fixed field is sent: left out, or as the fixed value; recorded as a
   *  deviation of the run (src/model/deviations.ts). One mode for every fixed field, or one per field. */
  deviate?: DeviateMode | Record<string, DeviateMode>;
  /** The fields that switch thinking off for this model (instead of the route's). */
  thinking_off?: Record<string, Json>;
  /** The model cannot switch thinking off: these fields (its lowest effort) are sent instead. */
  reasoning_low?: Record<string, Json>;
  /** The model cannot run a thinking-off task at all: why (shown when such a stage is refused). */
  no_thinking_off?: string;
}

/** omit: the field is left out of the body (the server's default applies); send_fixed: the fixed value. */
export type DeviateMode = "omit" | "send_fixed";

const DEFAULTS = {
  concurrency: 4,
  timeout_s: 120,
  retry: { max_attempts: 6, base_ms: 500, max_ms: 30_000, max_total_s: 300 },
  max_failures_in_a_row: 8,
  // A chat completion is kilobytes; 32 MiB leaves room for long logprobs, far below Node's string limit.
  max_reply_mb: 32,
};

export function loadRoutes(extraFiles: string[]): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const file of [builtInRegistry(), ...extraFiles]) {
    consult(file); // a route's fields are part of the model and judge stages' keys
    // The schema requires base_url.
    for (const [name, route] of Object.entries(registryRoutes(file) ?? {}))
      if (route?.base_url) routes.set(name, routeOf(name, { ...route, base_url: route.base_url }));
  }
  return routes;
}

const builtInRegistry = () => resolve(installRoot(), "registry/providers.yaml");

/** The built-in registry as checked when medbench was built (scripts/compile-spec-schema.mjs): its bytes'
 *  sha256 and routes. Read instead of parsing the YAML again on every build (13 to 22 ms of CPU). */
export const PARSED_REGISTRY = "dist/registry-parsed.json";

type Written = Record<string, Partial<Route>> | null;

/** The routes of a registry file as written, checked (a mistake refused at file:line:column). */
function registryRoutes(file: string): Written {
  let bytes: Buffer;
  try {
    bytes = readDocumentBytes(file); // a regular file of bounded size: a FIFO would block the build
  } catch (e) {
    const diagnostic = e instanceof DiagnosticError ? e.diagnostics[0] : undefined;
    const why =
      diagnostic?.message.match(/^cannot read it \((\w+)\)$/)?.[1] ??
      (diagnostic?.message === "no such file" ? "ENOENT" : null);
    throw new DiagnosticError([
      {
        file,
        message: `cannot read the route registry (${why ?? diagnostic?.message ?? String(e)})`,
        fix: "check the --registry path",
      },
    ]);
  }
  return file === builtInRegistry()
    ? builtInRoutes(bytes, file, parsedBuiltIn())
    : rememberedRoutes(bytes, file);
}

/** A --registry file's routes, checked once and remembered by the file's stat signature (the code memo,
 *  src/hash/code-memo.ts, in the project's cache) for as long as the file, its schema and this module are
 *  the same: a rebuild parses no YAML for it. A file that may hold a key (a header, a URL with a query) is
 *  parsed each time: a key never reaches a file. */
function rememberedRoutes(bytes: Buffer, file: string): Written {
  let derived: Written | undefined;
  let checkedBy: string[];
  try {
    checkedBy = [REGISTRY_SCHEMA.validator, "dist/src/model/registry.js"].map((module) =>
      factsOf(resolve(installRoot(), module), "sha256", (code) => sha256Hex(code)).slice(0, 16),
    );
  } catch {
    return checkedRoutes(bytes, file); // not built (the sources run): nothing to name the checks by
  }
  const fact = factsOf(resolve(file), `routes ${checkedBy.join(" ")}`, (now): Json => {
    derived = checkedRoutes(now, file);
    return mayHoldKeys(derived) ? { parsed_each_time: true } : { routes: derived as Json };
  });
  if (typeof fact === "object" && fact !== null && "routes" in fact) return fact.routes as Written;
  return derived ?? checkedRoutes(bytes, file);
}

/** Whether routes as written hold a value that may be a key: a header, or a URL's query. */
const mayHoldKeys = (routes: Written): boolean =>
  Object.values(routes ?? {}).some(
    (route) =>
      Object.keys(route?.headers ?? {}).length > 0 ||
      [route?.base_url, ...(route?.replicas ?? [])].some(
        (url) => typeof url === "string" && url.includes("?"),
      ),
  );

/** The built-in registry's routes as medbench's build recorded them, with the sha256 of the bytes parsed. */
export interface RecordedRegistry {
  sha256: string;
  routes: Written;
}

/** The built-in registry's routes: as recorded while `bytes` are the bytes recorded, else (the file edited
 *  since medbench was built) parsed and checked. */
export const builtInRoutes = (bytes: Buffer, file: string, recorded: RecordedRegistry | null): Written =>
  recorded?.sha256 === sha256Hex(bytes) ? recorded.routes : checkedRoutes(bytes, file);

function parsedBuiltIn(): RecordedRegistry | null {
  try {
    return JSON.parse(readFileSync(resolve(installRoot(), PARSED_REGISTRY), "utf8")) as RecordedRegistry;
  } catch {
    return null; // not built (the sources run): the YAML is parsed
  }
}

/** A registry file's routes, parsed with positions and checked against registry/registry.schema.json. */
export function checkedRoutes(bytes: Buffer, file: string): Written {
  const src = parseSourceDoc(bytes, file);
  const nonFinite = nonFiniteNumbers(src);
  if (nonFinite.length) throw new DiagnosticError(nonFinite);
  const raw = (src.value as { routes?: unknown } | null)?.routes;
  const value = src.value as { routes: Written };
  withQueryHidden(raw, () => {
    // Before any other check: a schema or URL message quotes the value, password and all.
    if (raw && typeof raw === "object")
      for (const [name, route] of Object.entries(raw as Record<string, unknown>))
        for (const written of writtenUrls(route)) refuseUserinfo(src, name, written);
    checkSchema(src.value, () => src, REGISTRY_SCHEMA);
    const bad = [
      ...baseUrlDiagnostics(src, value.routes ?? {}),
      ...deviateDiagnostics(src, value.routes ?? {}),
    ];
    if (bad.length) throw new DiagnosticError(bad);
  });
  return value.routes;
}

/** A route as written, with the defaults of the fields it leaves out and its base URL from its variable. */
function routeOf(name: string, route: Partial<Route> & { base_url: string }): Route {
  // The base URL from the route's variable when that is set (OPENAI_BASE_URL), else as written.
  const written = envBaseUrl(name, route.base_url_env) ?? route.base_url;
  const shown = publicUrl(written);
  return {
    name,
    ...(route.protocol !== undefined ? { protocol: route.protocol } : {}),
    base_url: shown,
    ...(shown !== written ? { base_url_with_secrets: written } : {}),
    base_url_env: route.base_url_env ?? null,
    ...replicaFields(route.replicas),
    api_key_env: route.api_key_env ?? null,
    headers: route.headers ?? {},
    concurrency: route.concurrency ?? DEFAULTS.concurrency,
    timeout_s: route.timeout_s ?? DEFAULTS.timeout_s,
    retry: { ...DEFAULTS.retry, ...(route.retry ?? {}) },
    max_failures_in_a_row: route.max_failures_in_a_row ?? DEFAULTS.max_failures_in_a_row,
    max_reply_mb: route.max_reply_mb ?? DEFAULTS.max_reply_mb,
    requests_per_minute: route.requests_per_minute ?? null,
    tokens_per_minute: route.tokens_per_minute ?? null,
    request: route.request ?? {},
    ...(route.price ? { price: route.price } : {}),
    ...(route.batch ? { batch: true } : {}),
  };
}

/**
 * The route's base URL from its `base_url_env` variable, when that is set (blank is unset, as the SDKs read
 * it), checked as a base_url written in a registry is: an http(s) URL with a host and no user name or
 * password. The value is never quoted (its query may carry a gateway's key). It is the route's base_url from
 * then on, in request keys too (docs/model-requests.md, "The base URL from the environment").
 */
function envBaseUrl(route: string, variable: string | null | undefined): string | null {
  if (!variable) return null;
  const value = consultEnv(variable)?.trim();
  if (!value) return null;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    /* refused below */
  }
  const problem =
    urlUserinfo(value) !== null
      ? "carries a user name or password, which medbench would keep in stage records, bundles and messages"
      : !url || !/^https?:$/.test(url.protocol) || !url.hostname
        ? "is not an http(s) URL with a host"
        : null;
  if (!problem) return value;
  throw new DiagnosticError([
    {
      file: `$${variable}`,
      message:
        `route ${route} takes its base URL from $${variable}, which ${problem} ` +
        "(its value is not shown)",
      fix:
        `set ${variable} to the server's address, e.g. https://api.example.com/v1, with any credential in ` +
        `the route's key variable or a header, or unset it to use the route's base_url`,
    },
  ]);
}

/**
 * A password in base_url (http://user:pass@host/v1) would be part of the request key, the stage record, the
 * bundle and every message naming the route: refused, without echoing it (docs/model-requests.md).
 */
function refuseUserinfo(src: SourceDoc, route: string, written: WrittenUrl): void {
  const { url, field } = written;
  const userinfo = urlUserinfo(url);
  if (userinfo === null) return;
  const hide = (text: string) => text.split(userinfo).join(REDACTED);
  const pointer = `/routes/${escapePointer(route)}/${field}`;
  const diagnostic = diagnosticAt(
    src,
    pointer,
    `route ${route}: ${field.replace("/", " ")} ${hide(url)} carries a user name or password, ` +
      "which medbench would " +
      "keep in stage records, bundles and messages",
    "remove it from the URL and give the credential as a key from the environment (api_key_env: NAME) " +
      "or a header (headers: { Authorization: ... }); both are redacted everywhere",
  );
  throw new DiagnosticError([
    {
      ...diagnostic,
      ...(diagnostic.sourceLine === undefined ? {} : { sourceLine: hide(diagnostic.sourceLine) }),
    },
  ]);
}

/** Runs a registry's checks with the values of every base_url's query hidden from their diagnostics (a
 *  message or the source line shown may quote a gateway's key). */
function withQueryHidden(routes: unknown, check: () => void): void {
  const values = Object.values(routes !== null && typeof routes === "object" ? routes : {})
    .flatMap((route) => writtenUrls(route))
    .flatMap((written) => queryValues(written.url))
    .sort((left, right) => right.length - left.length);
  try {
    check();
  } catch (e) {
    if (!(e instanceof DiagnosticError) || values.length === 0) throw e;
    const hide = (text: string) => values.reduce((out, value) => out.split(value).join(REDACTED), text);
    throw new DiagnosticError(
      e.diagnostics.map((diagnostic) => ({
        ...diagnostic,
        message: hide(diagnostic.message),
        ...(diagnostic.sourceLine === undefined ? {} : { sourceLine: hide(diagnostic.sourceLine) }),
      })),
    );
  }
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

/** Every route's base_url is an http(s) URL with a host, checked where it is written (`http://` or one with
 *  spaces would otherwise fail at the first request, or in the middle of `verify --live`). */
function baseUrlDiagnostics(src: SourceDoc, routes: Record<string, Partial<Route>>): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, route] of Object.entries(routes))
    for (const { url: written, field } of writtenUrls(route)) {
      let url: URL | null = null;
      try {
        url = new URL(written);
      } catch {
        /* refused below */
      }
      if (url && (url.protocol === "http:" || url.protocol === "https:") && url.hostname) continue;
      out.push(
        diagnosticAt(
          src,
          `/routes/${escapePointer(name)}/${field}`,
          `route ${name}: ${field.replace("/", " ")} ${JSON.stringify(publicUrl(written))} ` +
            "is not an http(s) URL with a host",
          "write the server's address, e.g. http://127.0.0.1:8000/v1 or https://api.openai.com/v1",
        ),
      );
    }
  return out;
}

/** A model rule's `deviate` names only fields its `fixed` holds (a mode for another field would do nothing,
 *  silently). */
function deviateDiagnostics(src: SourceDoc, routes: Record<string, Partial<Route>>): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, route] of Object.entries(routes))
    for (const [pattern, rule] of Object.entries(route?.request?.models ?? {})) {
      if (rule?.deviate === undefined) continue;
      const at = `/routes/${escapePointer(name)}/request/models/${escapePointer(pattern)}`;
      const fixed = Object.keys(rule.fixed ?? {});
      if (!fixed.length) {
        out.push(
          diagnosticAt(
            src,
            `${at}/deviate`,
            `route ${name}: the rule "${pattern}" has deviate but no fixed fields for it to apply to`,
            "add fixed: { FIELD: VALUE } (the value the model takes), or remove deviate",
          ),
        );
        continue;
      }
      if (typeof rule.deviate !== "object") continue;
      for (const field of Object.keys(rule.deviate).filter((field) => !fixed.includes(field)))
        out.push(
          diagnosticAt(
            src,
            `${at}/deviate/${escapePointer(field)}`,
            `route ${name}: the rule "${pattern}" says how to deviate from ${field}, which its fixed ` +
              `does not hold (fixed: ${fixed.join(", ")})`,
            `name a field of fixed, or add ${field} to fixed with the value the model takes`,
          ),
        );
    }
  return out;
}

interface WrittenUrl {
  url: string;
  field: string; // "base_url" or "replicas/N", its place under the route
}

/** A route's server URLs as written: base_url, then each replica. */
function writtenUrls(route: unknown): WrittenUrl[] {
  const { base_url: base, replicas } = (route ?? {}) as { base_url?: unknown; replicas?: unknown };
  const out: WrittenUrl[] = typeof base === "string" ? [{ url: base, field: "base_url" }] : [];
  if (Array.isArray(replicas))
    replicas.forEach((url, index) => {
      if (typeof url === "string") out.push({ url, field: `replicas/${index}` });
    });
  return out;
}

/** A route's replicas as records show them, and as written when a query carries values. */
function replicaFields(replicas: string[] | undefined): Pick<Route, "replicas" | "replicas_with_secrets"> {
  if (!replicas?.length) return {};
  const shown = replicas.map(publicUrl);
  const secret = shown.some((url, index) => url !== replicas[index]);
  return { replicas: shown, ...(secret ? { replicas_with_secrets: replicas } : {}) };
}
