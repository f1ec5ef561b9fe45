#!/usr/bin/env node
// A fake Anthropic Messages API server on 127.0.0.1 (POST /v1/messages), for tests and for trying medbench
// by hand:
//   node scripts/fake-anthropic.mjs --port 8002 [--policy voice-command] [--api-key KEY] [--thinking]
//        [--replay NAME=PERIOD] [--fault-attempts 1]
// It takes requests as the Messages API does (facts from https://docs.anthropic.com/en/api/messages, the
// versioning and errors pages, the extended thinking guide, and the SDK's types at
// anthropics/anthropic-sdk-typescript bfa9197f0182084941052be9752c948638421601,
// src/resources/messages/messages.ts): the key in x-api-key and an anthropic-version header, model,
// max_tokens and messages required, no unknown field, roles user and assistant only (the system prompt is
// top-level), a thinking budget of at least 1024 below max_tokens, temperature only 1 with thinking, no
// forced tool with thinking, a forced tool that is offered. Each refusal is a 400 invalid_request_error
// (or 401 authentication_error) in Anthropic's error shape. It answers with a Message: content blocks, a
// stop_reason and usage. The reply text comes from the same policies as the OpenAI fake
// (scripts/fake-openai.mjs), given the request as the chat messages it stands for, so that the same answers
// reach medbench through either protocol: as a tool_use block's input when the reply schema's tool is
// forced, else as a text block; a model thinks (a thinking block, its tokens counted) when asked, or always
// with --thinking. --replay NAME=PERIOD serves scripts/provider-replies/anthropic/NAME.json (a reply or
// error shape, each with its public source) to the requests whose messages hash falls in that period, on
// their first --fault-attempts attempts. GET /stats gives the request counts.
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { POLICIES } from "./fake-openai.mjs";
import { listening, runFromCommandLine } from "./fake-server-cli.mjs";
import { parseProviderArgs, ProviderRequests } from "./fake-provider.mjs";
const CORPUS = join(dirname(fileURLToPath(import.meta.url)), "provider-replies", "anthropic");

// The request fields the Messages API takes (MessageCreateParamsBase in the SDK's messages.ts).
const KNOWN = [
  "model",
  "max_tokens",
  "messages",
  "system",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "metadata",
  "thinking",
  "tools",
  "tool_choice",
  "output_config",
  "service_tier",
  "stream",
];

/** An error as the API sends it (docs/en/api/errors: type error, the error's type and message, an id). */
const apiError = (status, type, message) => ({
  status,
  body: { type: "error", error: { type, message }, request_id: `req_fake${status}` },
});
const invalid = (message) => apiError(400, "invalid_request_error", message);

/** The headers' checks: an anthropic-version (docs/en/api/versioning) and a key (docs/en/api/errors,
 *  401). */
function headerProblem(opts, req) {
  if (!req.headers["anthropic-version"]) return invalid("anthropic-version: header is required");
  const key = req.headers["x-api-key"];
  if (!key) return apiError(401, "authentication_error", "x-api-key header is required");
  if (opts.apiKey !== null && key !== opts.apiKey)
    return apiError(401, "authentication_error", "invalid x-api-key");
  return null;
}

/** The thinking and tool rules of the extended thinking guide and the tool use docs, or null. */
function thinkingProblem(body) {
  const thinking = body.thinking;
  if (thinking?.type === "enabled") {
    if (!(thinking.budget_tokens >= 1024))
      return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    if (!(thinking.budget_tokens < body.max_tokens))
      return invalid("`max_tokens` must be greater than `thinking.budget_tokens`");
    if (body.temperature !== undefined && body.temperature !== 1)
      return invalid("`temperature` may only be set to 1 when thinking is enabled.");
    if (body.tool_choice?.type === "tool" || body.tool_choice?.type === "any")
      return invalid("Thinking may not be enabled when tool_choice forces tool use.");
  }
  const forced = body.tool_choice?.type === "tool" ? body.tool_choice.name : null;
  if (forced !== null && !(body.tools ?? []).some((tool) => tool.name === forced))
    return invalid(`tool_choice.name: tool '${forced}' not found in tools`);
  return null;
}

/** The API's checks of a body before it generates, or null when the body passes them. */
function refusal(body) {
  const unknown = Object.keys(body).find((field) => !KNOWN.includes(field));
  if (unknown !== undefined) return invalid(`${unknown}: Extra inputs are not permitted`);
  for (const field of ["model", "max_tokens", "messages"])
    if (body[field] === undefined) return invalid(`${field}: Field required`);
  if (!/^claude-/.test(String(body.model))) return apiError(404, "not_found_error", `model: ${body.model}`);
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return invalid("max_tokens: Input should be greater than or equal to 1");
  const bad = body.messages.find((message) => !["user", "assistant"].includes(message.role));
  if (bad)
    return invalid(
      `messages: Unexpected role "${bad.role}". ` +
        "The Messages API accepts a top-level `system` parameter, " +
        `not "${bad.role}" as an input message role.`,
    );
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 1))
    return invalid("temperature: Input should be less than or equal to 1");
  return thinkingProblem(body);
}

/** The request as the chat messages it stands for, so that the OpenAI fake's policies answer it: each
 *  message's fields in the order an OpenAI body arrives in (medbench sends sorted keys), as the policies
 *  hash them. */
export function asChat(body) {
  const text = (content) =>
    typeof content === "string" ? content : (content ?? []).map((block) => block.text ?? "").join("");
  const schema = body.tool_choice?.type === "tool" || body.output_config?.format;
  return {
    model: body.model,
    messages: [
      ...(body.system !== undefined ? [{ content: text(body.system), role: "system" }] : []),
      ...body.messages.map((message) => ({ content: text(message.content), role: message.role })),
    ],
    ...(schema ? { response_format: { type: "json_schema" } } : {}),
  };
}

/** The answer's content block: the forced tool's input (the policy's JSON), else the text. */
function answerBlock(body, content, key) {
  if (body.tool_choice?.type !== "tool") return { type: "text", text: content };
  let input;
  try {
    input = JSON.parse(content);
  } catch {
    input = { text: content }; // a forced tool always gets an object
  }
  return { type: "tool_use", id: `toolu_${key.slice(0, 24)}`, name: body.tool_choice.name, input };
}

/** A Message with the policy's text (shape: the SDK's Message, Usage, ThinkingBlock types). */
export function reply(body, out, key, opts) {
  const content = typeof out === "object" ? out.content : out;
  const thinks = body.thinking?.type === "enabled" || opts.thinking;
  const thought =
    (typeof out === "object" && out.reasoning_content) || "I read the request and work it out.";
  const blocks = [
    ...(thinks ? [{ type: "thinking", thinking: thought, signature: `sig_${key.slice(0, 16)}` }] : []),
    answerBlock(body, content, key),
  ];
  const truncated = typeof out === "object" && out.finish_reason === "length";
  const stop = truncated ? "max_tokens" : body.tool_choice?.type === "tool" ? "tool_use" : "end_turn";
  const outputTokens = Math.max(1, Math.ceil(content.length / 4)) + (thinks ? 17 : 0);
  return {
    id: `msg_${key.slice(0, 24)}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content: blocks,
    stop_reason: stop,
    stop_sequence: null,
    usage: {
      input_tokens: 9,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: outputTokens,
      ...(thinks ? { output_tokens_details: { thinking_tokens: 17 } } : {}),
    },
  };
}

export function parseArgs(argv) {
  const more = (opts, arg) => arg === "--thinking" && (opts.thinking = true);
  return parseProviderArgs(argv, { port: 8002, thinking: false }, more);
}

export function startFakeAnthropic(options = {}) {
  const opts = { ...parseArgs([]), port: 0, ...options };
  const stats = { requests: 0, received: [], faults: {}, replies: 0 };
  const requests = new ProviderRequests(opts, stats, { label: "Anthropic", dir: CORPUS });
  const send = (res, status, body) =>
    res
      .writeHead(status, { "content-type": "application/json", "request-id": "req_fake" })
      .end(typeof body === "string" ? body : JSON.stringify(body));

  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (req.method === "GET" && url.pathname === "/stats")
      return send(res, 200, { ...stats, received: undefined });
    if (req.method !== "POST" || url.pathname !== "/v1/messages")
      return send(res, 404, apiError(404, "not_found_error", "Not found").body);
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });

  function answer(req, res, raw) {
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, invalid("There was an issue with the format of your request").body);
    }
    const apiKey = req.headers["x-api-key"] ?? null;
    const count = requests.received({ body, url: req.url, apiKey, headers: req.headers });
    const refused = headerProblem(opts, req) ?? refusal(body);
    if (refused) return (count(`refused-${refused.status}`), send(res, refused.status, refused.body));
    const served = requests.answer(
      { body, chat: asChat(body), model: body.model, count },
      {
        errorBody: (status) => apiError(status, "api_error", "Internal server error").body,
        reply: (out, bodyKey) => reply(body, out, bodyKey, opts),
      },
    );
    // A replayed shape goes out with its own headers, as recorded.
    if (served.headers) return res.writeHead(served.status, served.headers).end(served.body);
    send(res, served.status, served.body);
  }

  return listening(server, opts, stats);
}

const USAGE = `usage: node scripts/fake-anthropic.mjs [--port 8002] [--policy voice-command] [--api-key KEY]
    [--thinking] [--replay NAME=PERIOD ...] [--fault-attempts 1]
  policies: ${Object.keys(POLICIES).join(", ")}; replies: scripts/provider-replies/anthropic/`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href)
  await runFromCommandLine({
    usage: USAGE,
    parseArgs,
    start: startFakeAnthropic,
    said: (server) => `fake Anthropic Messages API on ${server.url} (ANTHROPIC_BASE_URL=${server.url})`,
  });
