#!/usr/bin/env node
// A fake Google Gemini API server on 127.0.0.1 (generateContent), for tests and for trying medbench by hand:
// node scripts/fake-gemini.mjs --port 8001 [--policy voice-command] [--api-key KEY] [--replay NAME=PERIOD]
// [--fault-attempts 1] It answers POST /v1beta/models/{model}:generateContent as the Gemini API does (facts
// from Google's reference, https://ai.google.dev/api/generate-content, and real replies recorded by
// googleapis/js-genai at commit 6e9b35c45e21f0d37179a24d29dca01ebed698e6, test/system/recordings/): the key
// in x-goog-api-key, the body's fields checked as the API checks them (an unknown field, a role other than
// user or model, a responseSchema without the JSON type, a thinking budget the model does not take: each a
// 400 INVALID_ARGUMENT), and a reply of candidates, usageMetadata and modelVersion. The reply text comes
// from the same policies as the OpenAI fake (scripts/fake-openai.mjs), given the request as the chat
// messages it stands for, so that the same answers reach medbench through either protocol. A model that
// thinks reports thoughtsTokenCount, and sends its thought summary as a part marked `thought` when
// includeThoughts is asked. --replay NAME=PERIOD serves scripts/provider-replies/gemini/NAME.json (a real
// reply or error shape, each with its source) to the requests whose contents hash falls in that period, on
// their first --fault-attempts attempts. GET /stats gives the request counts. Its Batch API
// (batchGenerateContent and the batches' operations) is scripts/fake-gemini-batch.mjs's, answering each
// request as this does.
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { POLICIES } from "./fake-openai.mjs";
import { replayed } from "./provider-replies/index.mjs";
import { listening, runFromCommandLine } from "./fake-server-cli.mjs";
import { parseProviderArgs, ProviderRequests, sha } from "./fake-provider.mjs";
import { geminiBatches } from "./fake-gemini-batch.mjs";

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), "provider-replies", "gemini");

// The fields of each object the API knows (https://ai.google.dev/api/generate-content,
// https://ai.google.dev/api/caching#Content). The API parses protocol-buffer JSON, so any other name is
// refused.
const KNOWN = {
  "": [
    "contents",
    "systemInstruction",
    "generationConfig",
    "safetySettings",
    "tools",
    "toolConfig",
    "cachedContent",
    "serviceTier",
  ],
  generation_config: [
    "stopSequences",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "responseModalities",
    "candidateCount",
    "maxOutputTokens",
    "temperature",
    "topP",
    "topK",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "responseLogprobs",
    "logprobs",
    "enableEnhancedCivicAnswers",
    "thinkingConfig",
    "mediaResolution",
  ],
  "generation_config.thinking_config": ["includeThoughts", "thinkingBudget", "thinkingLevel"],
};

/** A google.rpc.Status error body as the API sends it (ai.google.dev/gemini-api/docs/troubleshooting). */
const statusError = (code, status, message, details) => ({
  error: { code, message, status, ...(details ? { details } : {}) },
});
const invalid = (message) => ({ status: 400, body: statusError(400, "INVALID_ARGUMENT", message) });

/** Field names the API does not know, with the message it words them in: the name, and where when nested
 *  (github.com/googleapis/python-genai/issues/425, github.com/simonw/llm-gemini/issues/49). */
function unknownField(body) {
  const objects = [
    ["", body],
    ["generation_config", body.generationConfig],
    ["generation_config.thinking_config", body.generationConfig?.thinkingConfig],
  ];
  for (const [at, object] of objects) {
    if (!object || typeof object !== "object") continue;
    const name = Object.keys(object).find((field) => !KNOWN[at].includes(field));
    if (name === undefined) continue;
    const where = at ? ` at '${at}'` : "";
    const message = `Invalid JSON payload received. Unknown name "${name}"${where}: Cannot find field.`;
    const violation = { ...(at ? { field: at } : {}), description: message };
    const details = [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [violation] }];
    return { status: 400, body: statusError(400, "INVALID_ARGUMENT", message, details) };
  }
  return null;
}

/**
 * The thinking a model does under a thinkingConfig, or the API's refusal of it. Budgets per family from
 * https://ai.google.dev/gemini-api/docs/thinking: 2.5 Pro 128 to 32768 and cannot turn thinking off
 * ("Budget 0 is invalid. This model only works in thinking mode.", snailyp/gemini-balance#206); 2.5 Flash 0
 * to 24576; 2.5 Flash-Lite 512 to 24576 or 0, and off by default; -1 is dynamic. Gemini 3 takes
 * thinkingLevel and cannot switch thinking off; models before 2.5 take no thinkingConfig.
 */
function thinkingOf(model, config) {
  const budget = config?.thinkingBudget;
  const level = config?.thinkingLevel;
  if (/^gemini-(1\.|2\.0)/.test(model))
    return config ? invalid("Thinking is not supported for this model.") : { thinks: false };
  if (/^gemini-[3-9]/.test(model)) return { thinks: true };
  if (level !== undefined) return invalid("Thinking level is not supported for this model.");
  if (budget === undefined || budget === -1) return { thinks: !/flash-lite/.test(model) };
  const [low, high, off] = /pro/.test(model)
    ? [128, 32768, false]
    : /flash-lite/.test(model)
      ? [512, 24576, true]
      : [1, 24576, true];
  if (budget === 0 && !off) return invalid("Budget 0 is invalid. This model only works in thinking mode.");
  if (budget !== 0 && (budget < low || budget > high))
    return invalid(
      `The thinking budget ${budget} is invalid. Please choose a value between ${low} and ${high}.`,
    );
  return { thinks: budget !== 0 };
}

/** The API's checks of a body before it generates, or null when the body passes them. */
function refusal(model, body) {
  if (!/^(gemini|gemma)-/.test(model))
    return {
      status: 404,
      body: statusError(
        404,
        "NOT_FOUND",
        `models/${model} is not found for API version v1beta, or is not supported for generateContent. ` +
          "Call ListModels to see the list of available models and their supported methods.",
      ),
    };
  const unknown = unknownField(body);
  if (unknown) return unknown;
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    return invalid("* GenerateContentRequest.contents: contents is not specified\n");
  if (
    body.contents.some((content) => content.role !== undefined && !["user", "model"].includes(content.role))
  )
    return invalid("Please use a valid role: user, model.");
  // https://ai.google.dev/api/generate-content#generationconfig: a responseSchema needs the JSON MIME type.
  const config = body.generationConfig ?? {};
  if (config.responseSchema && config.responseMimeType !== "application/json")
    return invalid("'response_schema' requires 'response_mime_type' to be 'application/json'.");
  const thinking = thinkingOf(model, config.thinkingConfig);
  return "status" in thinking ? thinking : null;
}

/** The request as the chat messages it stands for, so that the OpenAI fake's policies answer it. Fields in
 *  the order medbench sends an OpenAI body's (sorted keys): policies hash the messages' JSON. */
function asChat(model, body) {
  const text = (content) => (content?.parts ?? []).map((part) => part.text ?? "").join("");
  const messages = [
    ...(body.systemInstruction ? [{ content: text(body.systemInstruction), role: "system" }] : []),
    ...body.contents.map((content) => ({
      content: text(content),
      role: content.role === "model" ? "assistant" : "user",
    })),
  ];
  const schema = body.generationConfig?.responseSchema;
  return { model, messages, ...(schema ? { response_format: { type: "json_schema" } } : {}) };
}

/** A generateContent reply with the policy's text (shape: js-genai's recordings named above). */
function reply(model, body, out, key) {
  const content = typeof out === "object" ? out.content : out;
  const config = body.generationConfig ?? {};
  const thinks = thinkingOf(model, config.thinkingConfig).thinks;
  const parts = [{ text: content }];
  // A policy's separate reasoning (the OpenAI fake's reasoning_content: a reply that came with reasoning)
  // comes as a thought part, as the same answer would over either protocol; otherwise a thinking model
  // shows its thought summary when includeThoughts is asked.
  const own = typeof out === "object" ? out.reasoning_content : undefined;
  if (own) parts.unshift({ text: own, thought: true });
  else if (thinks && config.thinkingConfig?.includeThoughts)
    parts.unshift({ text: "**Reading the request**\nI work it out.", thought: true });
  const finish = typeof out === "object" && out.finish_reason === "length" ? "MAX_TOKENS" : "STOP";
  const candidatesTokenCount = Math.max(1, Math.ceil(content.length / 4));
  const thoughtsTokenCount = thinks ? 17 : undefined;
  return {
    candidates: [{ content: { parts, role: "model" }, finishReason: finish, index: 0 }],
    usageMetadata: {
      promptTokenCount: 9,
      candidatesTokenCount,
      ...(thinks ? { thoughtsTokenCount } : {}),
      totalTokenCount: 9 + candidatesTokenCount + (thoughtsTokenCount ?? 0),
      promptTokensDetails: [{ modality: "TEXT", tokenCount: 9 }],
    },
    modelVersion: model,
    responseId: key.slice(0, 22),
  };
}

export function parseArgs(argv) {
  return parseProviderArgs(argv, { port: 8001, batchLifecycle: "succeeded", batchErrorPeriod: 5 });
}

/** The key check: none sent is a 403, a wrong one the API's 400 API_KEY_INVALID (corpus api-key-invalid). */
function keyProblem(opts, req, corpusEntry, model) {
  const key = req.headers["x-goog-api-key"];
  if (key === undefined)
    return {
      status: 403,
      body: statusError(
        403,
        "PERMISSION_DENIED",
        "Method doesn't allow unregistered callers (callers without established identity). " +
          "Please use API Key or other form of API consumer identity to call this API.",
      ),
    };
  if (opts.apiKey === null || key === opts.apiKey) return null;
  const served = replayed(corpusEntry("api-key-invalid"), { model }, "");
  return { status: served.status, text: served.body };
}

export function startFakeGemini(options = {}) {
  const opts = { ...parseArgs([]), port: 0, ...options };
  const stats = { requests: 0, received: [], faults: {}, replies: 0 };
  const requests = new ProviderRequests(opts, stats, { label: "Gemini", dir: CORPUS });
  const corpusEntry = (name) => requests.entry(name);
  const send = (res, status, body) =>
    res
      .writeHead(status, { "content-type": "application/json; charset=UTF-8" })
      .end(typeof body === "string" ? body : JSON.stringify(body));

  /** A request's answer on the plain path (no replayed fault), as a batch gives it. */
  const answer = (model, body) => {
    const refused = refusal(model, body);
    if (refused) return refused;
    const out = POLICIES[opts.policy](asChat(model, body), opts);
    if (typeof out === "object" && out.http_error)
      return { status: out.http_error, body: statusError(out.http_error, "INTERNAL", "An internal error.") };
    return { status: 200, body: reply(model, body, out, sha(JSON.stringify(body))) };
  };
  const batch = geminiBatches({
    opts,
    stats,
    answer,
    keyProblem: (req, model) => keyProblem(opts, req, corpusEntry, model),
    send,
  });

  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (req.method === "GET" && url.pathname === "/stats")
      return send(res, 200, { ...stats, received: undefined });
    if (/^\/v1beta\/(batches|models\/[^/:]+:batchGenerateContent)/.test(url.pathname)) {
      const chunks = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", () => batch.handle(req, res, url, Buffer.concat(chunks).toString("utf8")));
      return;
    }
    const match = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(url.pathname);
    if (req.method !== "POST" || !match) return send(res, 404, statusError(404, "NOT_FOUND", "Not Found"));
    const model = decodeURIComponent(match[1]);
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => generate(req, res, model, Buffer.concat(chunks).toString("utf8")));
  });

  function generate(req, res, model, raw) {
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, statusError(400, "INVALID_ARGUMENT", "Invalid JSON payload received."));
    }
    const apiKey = req.headers["x-goog-api-key"] ?? null;
    const count = requests.received({ body, model, url: req.url, apiKey });
    const key = keyProblem(opts, req, corpusEntry, model);
    if (key) return (count("key"), send(res, key.status, key.text ?? key.body));
    const refused = refusal(model, body);
    if (refused) return (count(`refused-${refused.status}`), send(res, refused.status, refused.body));
    const served = requests.answer(
      { body, chat: asChat(model, body), model, count },
      {
        errorBody: (status) => statusError(status, "INTERNAL", "An internal error has occurred."),
        reply: (out, bodyKey) => reply(model, body, out, bodyKey),
      },
    );
    // A replayed shape goes out with its own headers, as recorded.
    if (served.headers) return res.writeHead(served.status, served.headers).end(served.body);
    send(res, served.status, served.body);
  }

  return listening(server, opts, stats).then((handle) => ({
    ...handle,
    whenSubmitted: batch.whenSubmitted,
  }));
}

const USAGE = `usage: node scripts/fake-gemini.mjs [--port 8001] [--policy voice-command] [--api-key KEY]
    [--replay NAME=PERIOD ...] [--fault-attempts 1]
  policies: ${Object.keys(POLICIES).join(", ")}; replies: scripts/provider-replies/gemini/`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href)
  await runFromCommandLine({
    usage: USAGE,
    parseArgs,
    start: startFakeGemini,
    said: (server) => `fake Gemini API server on ${server.url} (GOOGLE_GEMINI_BASE_URL=${server.url})`,
  });
