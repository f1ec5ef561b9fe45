#!/usr/bin/env node
// A fake OpenAI-compatible server on 127.0.0.1 for tests and for trying medbench by hand:
//   node scripts/fake-openai.mjs --port 8000 [--policy voice-command] [--latency-ms 0]
//        [--fault 429=7 --fault 500=11 --fault reset=13 --fault hang=17 --fault malformed=19]
//        [--fault length=23 --fault empty=29 --fault auth=31 --fault large=37 --fault 409=41]
//        [--large-bytes N] [--dead-after N]
//        [--refuse-schema [NAME=PERIOD]] [--reasoning none|field|think] [--retry-after 1] [--hang-ms 5000]
//        [--fault-attempts 1]
//        [--keep-received 10000] [--record FILE] [--replay NAME=PERIOD] [--rate-limit RPM[:BURST]]
// Faults hit the requests whose body hash falls in that period (deterministic), and only on their first
// --fault-attempts attempts (1: a retry succeeds; more than the client's retries: a permanent failure),
// except `length`, which is a reply, and --refuse-schema, which is every json_schema request. `empty` is a
// 200 with `choices: []`; `auth` a 401 whose body echoes the Authorization header (as some gateways do);
// `large` a 200 answer of --large-bytes (default 1 MiB), streamed without a content-length; a 429 carries
// `retryAfter` (null: none) and, like a 409, `faultHeaders` (from a test: retry-after-ms, x-ratelimit-*).
// --dead-after N: after N replies the server accepts every request and never answers. set(options) changes
// them at run time (from a test, `gate`: a promise every reply waits for). `stats` counts connections too (a
// keep-alive client opens few). GET /stats gives request counts per body; GET /v1/models lists the models it
// answers for. --replay NAME=PERIOD serves scripts/provider-replies/NAME.json (a real provider's reply
// shape) to the requests whose body hash falls in that period, on their first --fault-attempts attempts,
// like a fault. --refuse-schema NAME[=PERIOD] answers the json_schema requests whose body hash falls in
// that period (all by default) with the entry NAME (a provider's own refusal); from a test,
// refuseSchemaPeriod. --rate-limit RPM[:BURST] puts a token bucket before all of it
// (scripts/fake-rate-limit.mjs): OpenAI's rate-limit headers on every reply, 429 when it is empty.
import { createServer } from "node:http";
import { createWriteStream } from "node:fs";
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import { NOTE_ERRORS_POLICIES } from "./fake-policies/note-errors.mjs";
import { loadProviderReplies, replayed } from "./provider-replies/index.mjs";
import { parseRateLimit, rateLimiter } from "./fake-rate-limit.mjs";
import { runFromCommandLine } from "./fake-server-cli.mjs";

const sha = (s) => createHash("sha256").update(s).digest("hex");

/** Policies: a reply text for a request. Each is right on some items and wrong on others. */
export const POLICIES = {
  // Keyword rules over the utterance; the "variant" flips a few items (for verify --live tests).
  "voice-command": (body, opts) => {
    const user = body.messages.find((m) => m.role === "user")?.content ?? "";
    const u = (user.split("\n").find((l) => l.startsWith("발화:")) ?? user).slice(3).trim();
    const A = (type, s = {}) => ({
      type,
      target: null,
      instrument: null,
      direction: null,
      magnitude: null,
      ...s,
    });
    let reply;
    if (/멈|정지|스톱|stop/i.test(u)) reply = { response: "execute", actions: [A("STOP")] };
    else if (/요관|ureter|신경|NVB/i.test(u)) reply = { response: "reject", actions: [] };
    else if (/카메라|camera/i.test(u)) {
      const direction = /왼|left/i.test(u) ? "left" : /오른|right/i.test(u) ? "right" : null;
      reply = {
        response: "execute",
        actions: [A("MOVE_CAMERA", { direction, magnitude: /조금|살짝/.test(u) ? "small" : null })],
      };
    } else if (/줌|확대|zoom/i.test(u))
      reply = { response: "execute", actions: [A("ZOOM", { direction: "in" })] };
    else if (/거즈|gauze/i.test(u))
      reply = { response: "execute", actions: [A("HAND_OVER", { instrument: "gauze" })] };
    else if (/그거|저거|더 해|more/.test(u)) reply = { response: "clarify", actions: [] };
    else reply = { response: "reject", actions: [] };
    if (opts.variant && parseInt(sha(u).slice(0, 8), 16) % opts.variant === 0) {
      reply =
        reply.response === "reject"
          ? { response: "clarify", actions: [] }
          : { response: "reject", actions: [] };
    }
    return JSON.stringify({ ...reply, message: "" });
  },
  // MTSamples: plans of varying quality; judge replies (requests holding <gold_response>) that are sometimes
  // malformed, missing the final }, missing a criterion, or out of range, as real judges are.
  mtsamples: (body) => {
    const text = body.messages.map((m) => m.content).join("\n");
    const h = parseInt(sha(text).slice(0, 8), 16);
    if (text.includes("<gold_response>")) {
      const tag = (t) => (new RegExp(`<${t}>([\\s\\S]*?)</${t}>`).exec(text)?.[1] ?? "").toLowerCase();
      const words = (s) => new Set(s.match(/[a-z]+/g) ?? []);
      const a = words(tag("response")),
        g = words(tag("gold_response"));
      const common = [...a].filter((w) => g.has(w)).length;
      // Judges disagree a little: each model name shifts some scores by one.
      const shift = (parseInt(sha(text + body.model).slice(0, 8), 16) % 3) - 1;
      const s = Math.min(
        5,
        Math.max(1, 1 + Math.round((4 * 2 * common) / Math.max(1, a.size + g.size)) + shift),
      );
      const c = (n) => ({ score: n, explanation: "fake judge" });
      const ok = { accuracy: c(s), completeness: c(Math.max(1, s - 1)), clarity: c(Math.min(5, s + 1)) };
      switch (h % 8) {
        case 0:
          return "The plan looks reasonable; I would give it a four.";
        case 1:
          return JSON.stringify(ok).slice(0, -1); // the missing } that HELM repairs
        case 2:
          return JSON.stringify({ accuracy: ok.accuracy, completeness: ok.completeness });
        case 3:
          return JSON.stringify({ ...ok, accuracy: c(7), clarity: c(0) });
        default:
          return "Here is my evaluation:\n" + JSON.stringify(ok);
      }
    }
    const note = body.messages.find((m) => m.role === "user")?.content ?? "";
    const lines = note.trim().split("\n");
    switch (h % 3) {
      case 0:
        return lines[lines.length - 1];
      case 1:
        return "Follow up in two weeks. Continue current medications.";
      default:
        return `<think>The note describes ${lines[0]}.</think>\n${lines[Math.floor(lines.length / 2)]}`;
    }
  },
  // Echoes the last user message (for plumbing tests).
  echo: (body) => body.messages.filter((m) => m.role === "user").pop()?.content ?? "",
  // note-errors, note-errors-plain, note-errors-weak (scripts/fake-policies/note-errors.mjs). A policy may
  // return { content, finish_reason, reasoning_content } or { http_error: status } instead of a text.
  ...NOTE_ERRORS_POLICIES,
};

export function parseArgs(argv) {
  const opts = {
    port: 8000,
    policy: "voice-command",
    latencyMs: 0,
    faults: {},
    replay: {}, // provider reply corpus entries by name -> period (scripts/provider-replies)
    refuseSchema: false,
    reasoning: "none",
    retryAfter: 1, // a 429 fault's Retry-After in seconds (null: none)
    faultHeaders: {}, // headers added to a 429 or 409 fault's reply (retry-after-ms, x-ratelimit-*)
    hangMs: 5000,
    variant: 0,
    faultAttempts: 1,
    deadAfter: null,
    echoHeader: null, // tests: a header name whose value each reply echoes (in reasoning_content)
    echoUrl: false, // tests: each reply echoes the request's URL, query included (in reasoning_content)
    holdAuthorization: null, // tests: the Authorization header whose requests `gate` holds (null: all)
    heldStatus: null, // tests: the HTTP status each request `gate` held is answered with (null: its reply)
    largeBytes: 1 << 20, // the size of a `large` fault's reply
    keepReceived: 10_000, // bodies kept in stats.received (tests read them; a benchmark passes 0)
    record: null, // a file each request body is appended to, one line each, as received (benchmarks)
    rateLimit: null, // { requestsPerMinute, burst? }: a token bucket answering 429 (fake-rate-limit.mjs)
    usage: "fixed", // "counted": token counts that differ by request (usageOf)
    usageScale: 1, // "counted" counts times this (tests: a server whose counts exceed medbench's estimate)
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i],
      v = () => argv[++i];
    if (a === "--port") opts.port = Number(v());
    else if (a === "--policy") opts.policy = v();
    else if (a === "--latency-ms") opts.latencyMs = Number(v());
    else if (a === "--fault") {
      const [k, n] = v().split("=");
      opts.faults[k] = Number(n);
    } else if (a === "--replay") {
      const [k, n] = v().split("=");
      opts.replay[k] = Number(n ?? 1);
    } else if (a === "--refuse-schema" && argv[i + 1] && !argv[i + 1].startsWith("--")) {
      const [name, n] = v().split("=");
      opts.refuseSchema = name;
      opts.refuseSchemaPeriod = Number(n ?? 1);
    } else if (a === "--refuse-schema") opts.refuseSchema = true;
    else if (a === "--reasoning") opts.reasoning = v();
    else if (a === "--usage") opts.usage = v();
    else if (a === "--retry-after") opts.retryAfter = Number(v());
    else if (a === "--hang-ms") opts.hangMs = Number(v());
    else if (a === "--variant") opts.variant = Number(v());
    else if (a === "--fault-attempts") opts.faultAttempts = Number(v());
    else if (a === "--dead-after") opts.deadAfter = Number(v());
    else if (a === "--keep-received") opts.keepReceived = Number(v());
    else if (a === "--large-bytes") opts.largeBytes = Number(v());
    else if (a === "--record") opts.record = v();
    else if (a === "--rate-limit") opts.rateLimit = parseRateLimit(v());
    else throw new Error(`unknown option ${a}`);
  }
  for (const k of ["port", "latencyMs", "retryAfter", "hangMs", "variant", "faultAttempts"])
    if (!Number.isFinite(opts[k]))
      throw new Error(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} takes a number`);
  if (!(opts.policy in POLICIES)) throw new Error(`unknown policy ${opts.policy}`);
  return opts;
}

// OpenAI's reasoning models (gpt-5 family but gpt-5-chat, o1, o3, o4) take temperature and top_p only at
// their default, 1: another value is a 400 unsupported_value, as OpenAI answers it (quoted from
// api.openai.com for gpt-5-mini in QwenLM/qwen-code#921, and in full, type, param and code, in
// gabrii/Cursor-Azure-GPT-5#33; corpus entry openai-temperature-unsupported-value). Always on, as OpenAI is.
const REASONING_MODEL = /^(?:gpt-5(?!-chat)|o[134](?![0-9]))/;
export function reasoningModelRefusal(body) {
  if (typeof body.model !== "string" || !REASONING_MODEL.test(body.model)) return null;
  const param = ["temperature", "top_p"].find((name) => name in body && body[name] !== 1);
  if (!param) return null;
  return {
    error: {
      message:
        `Unsupported value: '${param}' does not support ${JSON.stringify(body[param])} with this model. ` +
        "Only the default (1) value is supported.",
      type: "invalid_request_error",
      param,
      code: "unsupported_value",
    },
  };
}

const FAULT_ORDER = [
  "429",
  "500",
  "503",
  "reset",
  "hang",
  "malformed",
  "length",
  "empty",
  "auth",
  "large",
  "409",
];

export function startFakeOpenAI(options = {}) {
  const opts = { ...parseArgs([]), port: 0, ...options };
  const attempts = new Map(); // body hash -> requests seen
  // received: bodies and headers, for tests; answered: the body hashes given a reply
  const stats = {
    requests: 0,
    bodies: attempts,
    faults: {},
    received: [],
    answered: new Set(),
    connections: 0, // TCP connections accepted (a keep-alive client opens few)
    maxOpen: 0, // the most open at once
    firstAt: null, // when the first request came and the last reply went (ms since the epoch; benchmarks)
    lastAnsweredAt: null,
    replies: 0, // 200s with a completion
  };
  const record = opts.record ? createWriteStream(opts.record, { flags: "a" }) : null;
  const limiter = opts.rateLimit ? rateLimiter(opts.rateLimit) : null;
  const policy = typeof opts.policy === "function" ? opts.policy : POLICIES[opts.policy];
  if (!policy) throw new Error(`unknown policy ${opts.policy}`);
  // Each fault picks its own residue, so that one body meets at most one kind of fault.
  const faultFor = (h) =>
    FAULT_ORDER.find((f, i) => opts.faults[f] && h % opts.faults[f] === i % opts.faults[f]);
  let corpus = null; // loaded when a shape is first replayed (set() may ask for one later)
  const corpusEntry = (name) => {
    const entry = (corpus ??= loadProviderReplies())[name];
    if (!entry) throw new Error(`no provider reply ${name} in scripts/provider-replies`);
    return entry;
  };
  for (const name of Object.keys(opts.replay)) corpusEntry(name); // a wrong name fails at start
  if (typeof opts.refuseSchema === "string") corpusEntry(opts.refuseSchema);
  // Each replayed shape picks its own residue too (after the first nine faults'), as faults do; fixed, so
  // that a fault kind added later does not move which bodies a shape is served to.
  const replayFor = (h) =>
    Object.keys(opts.replay).find((name, i) => h % opts.replay[name] === (9 + i) % opts.replay[name]);

  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (req.method === "GET" && url.pathname === "/stats") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          requests: stats.requests,
          bodies: attempts.size,
          max_attempts: Math.max(0, ...attempts.values()),
          replies: stats.replies,
          first_at: stats.firstAt,
          last_answered_at: stats.lastAnsweredAt,
          faults: stats.faults,
        }),
      );
      return;
    }
    if (req.method === "GET" && url.pathname === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model" }] }));
      return;
    }
    if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400).end('{"error":{"message":"invalid JSON"}}');
        return;
      }
      stats.requests++;
      stats.firstAt ??= Date.now();
      record?.write(raw.replace(/\n/g, " ") + "\n"); // a newline in JSON is whitespace
      if (stats.received.length < opts.keepReceived)
        stats.received.push({
          body,
          url: req.url,
          authorization: req.headers.authorization ?? null,
          at: Date.now(),
          fault: null,
        });
      const key = sha(JSON.stringify(body.messages) + JSON.stringify(body.response_format ?? null));
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      const h = parseInt(sha(JSON.stringify(body.messages)).slice(0, 8), 16);
      const fault = faultFor(h);
      const count = (f) => {
        stats.faults[f] = (stats.faults[f] ?? 0) + 1;
        const last = stats.received[stats.received.length - 1];
        if (last && last.body === body) last.fault = f;
      };
      const unsupported = reasoningModelRefusal(body);
      if (unsupported) {
        count("unsupported-value");
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(unsupported));
        return;
      }
      const limit = limiter?.take(body.model);
      if (limit && !limit.ok) {
        count("rate-limit");
        res.writeHead(429, limit.headers).end(limit.body);
        return;
      }
      if (opts.latencyMs) await new Promise((r) => setTimeout(r, opts.latencyMs));
      // Tests: hold every reply (or, with holdAuthorization, those of one key: one machine's) until the
      // promise resolves; with heldStatus, each reply held is then that error, as a server that stalled.
      const held =
        opts.gate && (!opts.holdAuthorization || req.headers.authorization === opts.holdAuthorization);
      if (held) await opts.gate;
      if (held && opts.heldStatus) {
        count(`held-${opts.heldStatus}`);
        res.writeHead(opts.heldStatus).end('{"error":{"message":"server error"}}');
        return;
      }
      if (opts.deadAfter !== null && stats.answered.size >= opts.deadAfter) {
        count("dead");
        return; // accepted, never answered
      }
      const schemaRefused = h % (opts.refuseSchemaPeriod ?? 1) === 0;
      if (opts.refuseSchema && body.response_format?.type === "json_schema" && schemaRefused) {
        count("refuse-schema");
        if (typeof opts.refuseSchema === "string") {
          const served = replayed(corpusEntry(opts.refuseSchema), body, "");
          res.writeHead(served.status, served.headers).end(served.body);
          return;
        }
        res
          .writeHead(400, { "content-type": "application/json" })
          .end('{"error":{"message":"response_format json_schema is not supported"}}');
        return;
      }
      if (fault && fault !== "length" && n <= opts.faultAttempts) {
        count(fault);
        if (fault === "429") {
          const after = opts.retryAfter === null ? {} : { "retry-after": String(opts.retryAfter) };
          res.writeHead(429, { ...after, ...opts.faultHeaders }).end('{"error":{"message":"rate limited"}}');
          return;
        }
        if (fault === "409") {
          res.writeHead(409, opts.faultHeaders).end('{"error":{"message":"conflict"}}');
          return;
        }
        if (fault === "500" || fault === "503") {
          // Tests: a gateway whose error page quotes the URL it was sent to, query included.
          const at = opts.echoUrl ? ` at ${req.url}` : "";
          res.writeHead(Number(fault)).end(JSON.stringify({ error: { message: `server error${at}` } }));
          return;
        }
        if (fault === "reset") {
          req.socket.destroy();
          return;
        }
        if (fault === "hang") {
          await new Promise((r) => setTimeout(r, opts.hangMs));
          if (!res.destroyed) res.writeHead(503).end();
          return;
        }
        if (fault === "malformed") {
          res.writeHead(200, { "content-type": "application/json" }).end('{"choices": [ {"mess');
          return;
        }
        if (fault === "empty") {
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ id: "chatcmpl-empty", object: "chat.completion", choices: [] }));
          return;
        }
        if (fault === "large") {
          // A reply of --large-bytes, sent in chunks with no content-length (read as it streams in).
          res.writeHead(200, { "content-type": "application/json" });
          const filler = "x".repeat(64 * 1024);
          res.write('{"id":"chatcmpl-large","object":"chat.completion","choices":[{"index":0,');
          res.write('"finish_reason":"stop","message":{"role":"assistant","content":"');
          for (let sent = 0; sent < opts.largeBytes && !res.destroyed; sent += filler.length) {
            if (!res.write(filler)) await new Promise((r) => res.once("drain", r));
          }
          res.end('"}}]}');
          return;
        }
        if (fault === "auth") {
          const echoed = req.headers.authorization ?? "(none)";
          res.writeHead(401, { "content-type": "application/json" }).end(
            JSON.stringify({
              error: {
                message:
                  `Incorrect API key provided: ${echoed}. ` +
                  "Request id req_1, session sk-gw-0a1b2c3d4e5f6a7b8c9d0e1f.",
                headers: { authorization: echoed },
              },
            }),
          );
          return;
        }
      }
      const out = policy(body, opts);
      const shape = replayFor(h);
      if (shape && n <= opts.faultAttempts) {
        count(`replay-${shape}`);
        const served = replayed(corpusEntry(shape), body, typeof out === "object" ? out.content : out);
        res.writeHead(served.status, served.headers).end(served.body);
        return;
      }
      if (typeof out === "object" && out.http_error) {
        count(`policy-${out.http_error}`);
        res.writeHead(out.http_error).end('{"error":{"message":"server error"}}');
        return;
      }
      let content = typeof out === "object" ? out.content : out;
      let finish = typeof out === "object" && out.finish_reason ? out.finish_reason : "stop";
      if (fault === "length") {
        count("length");
        content = content.slice(0, Math.max(1, Math.floor(content.length / 2)));
        finish = "length";
      }
      const message = { role: "assistant", content };
      if (opts.reasoning === "think") message.content = `<think>생각 중…</think>${content}`;
      if (opts.reasoning === "field") message.reasoning_content = "생각 중…";
      if (typeof out === "object" && out.reasoning_content)
        message.reasoning_content = out.reasoning_content;
      // Tests: a gateway that echoes a request header back (its value must be redacted by the client).
      if (opts.echoHeader) message.reasoning_content = `echo ${req.headers[opts.echoHeader] ?? "(none)"}`;
      // Tests: a gateway that echoes the URL it was sent to (a key in its query must be redacted).
      if (opts.echoUrl) message.reasoning_content = `echo ${req.url}`;
      stats.answered.add(key);
      stats.replies++;
      stats.lastAnsweredAt = Date.now();
      res.writeHead(200, { "content-type": "application/json", ...limit?.headers });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${key.slice(0, 12)}`,
          object: "chat.completion",
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage: usageOf(opts, body, content),
        }),
      );
    });
  });
  let open = 0;
  server.on("connection", (socket) => {
    stats.connections++;
    stats.maxOpen = Math.max(stats.maxOpen, ++open);
    socket.on("close", () => open--);
  });
  return new Promise((resolve) => {
    server.listen(opts.port, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        port,
        url: `http://127.0.0.1:${port}/v1`,
        stats,
        set: (changes) => Object.assign(opts, changes),
        close: () =>
          new Promise((r) => {
            server.closeAllConnections?.();
            server.close(() => (record ? record.end(() => r()) : r()));
          }),
      });
    });
  });
}

/**
 * A reply's usage. "counted": OpenAI's usage object with its details, as the chat completion object
 * documents it (platform.openai.com/docs/api-reference/chat/object: prompt_tokens includes
 * prompt_tokens_details.cached_tokens, completion_tokens includes
 * completion_tokens_details.reasoning_tokens), with counts that differ by request: the messages' characters
 * / 4, the reply's characters plus 7 reasoning tokens, and 64 cached when the prompt has 128 or more.
 */
export function usageOf(opts, body, content) {
  if (opts.usage !== "counted") return { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  const scale = opts.usageScale ?? 1;
  const prompt = Math.ceil(JSON.stringify(body.messages).length / 4) * scale;
  const completion = (content.length + 7) * scale;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: prompt >= 128 ? 64 : 0 },
    completion_tokens_details: { reasoning_tokens: 7 },
  };
}

const USAGE = `usage: node scripts/fake-openai.mjs [--port 8000] [--policy voice-command] [--latency-ms 0]
    [--fault KIND=PERIOD ...] [--dead-after N] [--refuse-schema [NAME=PERIOD]] [--reasoning none|field|think]
    [--retry-after 1] [--hang-ms 5000] [--variant 0] [--fault-attempts 1] [--replay NAME=PERIOD ...]
    [--large-bytes 1048576]
    [--rate-limit RPM[:BURST]] [--usage fixed|counted]
  KIND: ${FAULT_ORDER.join(", ")}; policies: ${Object.keys(POLICIES).join(", ")}`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href)
  await runFromCommandLine({
    usage: USAGE,
    parseArgs,
    start: startFakeOpenAI,
    said: (server) => `fake OpenAI-compatible server on ${server.url}`,
  });
