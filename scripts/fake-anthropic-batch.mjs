// A fake of Anthropic's Message Batches on 127.0.0.1, for tests: POST /v1/messages/batches, GET
// /v1/messages/batches/{id}, POST /v1/messages/batches/{id}/cancel, and the results at the batch's
// results_url (docs.anthropic.com/en/api/creating-message-batches, retrieving-message-batches,
// retrieving-message-batch-results, canceling-message-batches). A batch goes in_progress -> ended, a step
// per GET; on a cancel, canceling -> ended. Each request's result, by `outcome(i, params)`, is one of the
// result types the results document: succeeded (a Message: docs.anthropic.com/en/api/messages, "Response"),
// errored (an error object, e.g. invalid_request_error), canceled (the batch was cancelled first) or expired
// (the batch's 24 hours ran out first). A batch object's shape: "Message Batch" in the same reference
// (id, type message_batch, processing_status, request_counts, ended_at, results_url, …). The key must come
// in x-api-key with an anthropic-version header, as the API requires. GET
// /v1/messages/batches?limit&after_id lists them newest first
// (docs.anthropic.com/en/api/listing-message-batches: {data, has_more, first_id, last_id}). `holdCreate`: a
// create is taken (the batch made, counted) and never answered, as when the caller dies while the provider
// answers; `whenSubmitted()` resolves at the next create taken.
import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { POLICIES } from "./fake-openai.mjs";
import { asChat, reply } from "./fake-anthropic.mjs";

const sha = (s) => createHash("sha256").update(s).digest("hex");

/** The message a request is answered with: with `policy`, the one scripts/fake-anthropic.mjs answers the
 *  same body with online (so a batch build's results can be compared with an online build's); else a fixed
 *  one. */
function message(params, i, opts) {
  if (opts.policy)
    return reply(params, POLICIES[opts.policy](asChat(params), opts), sha(JSON.stringify(params)), opts);
  const text = opts.text ? opts.text(params) : `reply ${i}`;
  return {
    id: `msg_${String(i).padStart(6, "0")}`,
    type: "message",
    role: "assistant",
    model: params.model,
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10 + i, output_tokens: text.length, cache_read_input_tokens: 0 },
  };
}

const ERRORED = {
  type: "error",
  error: { type: "invalid_request_error", message: "max_tokens: Field required" },
};

export function startFakeAnthropicBatches(options = {}) {
  const opts = { outcome: () => "succeeded", apiKey: "sk-ant-test", ...options };
  const batches = new Map();
  const stats = { submitted: 0, requests: 0, polls: 0, cancels: 0, unauthorised: 0 };
  let n = 0;
  let base = "";
  const waiting = [];
  const json = (res, status, value) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

  const view = (batch) => ({
    id: batch.id,
    type: "message_batch",
    processing_status: batch.status,
    request_counts: batch.counts,
    ended_at: batch.status === "ended" ? "2026-12-07T00:00:00Z" : null,
    created_at: batch.created_at,
    expires_at: new Date(Date.parse(batch.created_at) + 86_400_000).toISOString(),
    cancel_initiated_at: batch.cancelled ? "2026-12-07T00:00:00Z" : null,
    results_url: batch.status === "ended" ? `${base}/v1/messages/batches/${batch.id}/results` : null,
  });

  function end(batch) {
    batch.status = "ended";
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    batch.results = batch.requests.map((req, i) => {
      let type = opts.outcome(i, req.params);
      if (batch.cancelled && type === "succeeded" && i % 2 === 1) type = "canceled";
      counts[type]++;
      const result =
        type === "succeeded"
          ? { type, message: message(req.params, i, opts) }
          : type === "errored"
            ? { type, error: ERRORED }
            : { type };
      return { custom_id: req.custom_id, result };
    });
    batch.counts = counts;
  }

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.headers["x-api-key"] !== opts.apiKey || !req.headers["anthropic-version"]) {
        stats.unauthorised++;
        const error = { type: "authentication_error", message: "invalid x-api-key" };
        return json(res, 401, { type: "error", error });
      }
      const url = new URL(req.url, "http://x");
      let m;
      if (req.method === "POST" && url.pathname === "/v1/messages/batches") {
        const { requests } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        stats.submitted++;
        stats.requests += requests.length;
        const id = `msgbatch_${String(++n).padStart(4, "0")}`;
        const processing = requests.length;
        const counts = { processing, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
        const created_at = new Date().toISOString();
        const batch = { id, requests, status: "in_progress", counts, cancelled: false, created_at };
        batches.set(id, batch);
        for (const resolve of waiting.splice(0)) resolve();
        if (opts.holdCreate) return; // never answered: the caller is killed meanwhile
        return json(res, 200, view(batch));
      }
      if (req.method === "GET" && url.pathname === "/v1/messages/batches") {
        const all = [...batches.values()].reverse();
        const after = url.searchParams.get("after_id");
        const from = after ? all.findIndex((batch) => batch.id === after) + 1 : 0;
        const data = all.slice(from, from + Number(url.searchParams.get("limit") ?? 20)).map(view);
        const has_more = from + data.length < all.length;
        const ids = { first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
        return json(res, 200, { data, has_more, ...ids });
      }
      if ((m = /^\/v1\/messages\/batches\/([^/]+)$/.exec(url.pathname)) && req.method === "GET") {
        const batch = batches.get(m[1]);
        if (!batch)
          return json(res, 404, { type: "error", error: { type: "not_found_error", message: "no batch" } });
        stats.polls++;
        if (batch.status !== "ended" && batch.polled) end(batch);
        batch.polled = true;
        return json(res, 200, view(batch));
      }
      if ((m = /^\/v1\/messages\/batches\/([^/]+)\/cancel$/.exec(url.pathname)) && req.method === "POST") {
        const batch = batches.get(m[1]);
        if (!batch)
          return json(res, 404, { type: "error", error: { type: "not_found_error", message: "no batch" } });
        stats.cancels++;
        batch.cancelled = true;
        if (batch.status !== "ended") batch.status = "canceling";
        return json(res, 200, view(batch));
      }
      if ((m = /^\/v1\/messages\/batches\/([^/]+)\/results$/.exec(url.pathname)) && req.method === "GET") {
        const batch = batches.get(m[1]);
        if (!batch?.results)
          return json(res, 404, {
            type: "error",
            error: { type: "not_found_error", message: "no results" },
          });
        const text = batch.results.map((row) => JSON.stringify(row)).join("\n") + "\n";
        return res.writeHead(200, { "content-type": "application/x-jsonl" }).end(text);
      }
      json(res, 404, {
        type: "error",
        error: { type: "not_found_error", message: `${req.method} ${url.pathname}` },
      });
    });
  });
  return new Promise((resolve) =>
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address();
      base = `http://127.0.0.1:${port}`;
      resolve({
        url: base, // a route's base_url, as Anthropic's is (https://api.anthropic.com)
        stats,
        batches,
        set: (changes) => Object.assign(opts, changes),
        whenSubmitted: () => new Promise((resolve) => waiting.push(resolve)),
        close: () => new Promise((r) => (server.closeAllConnections?.(), server.close(() => r()))),
      });
    }),
  );
}
