// A fake of OpenAI's Batch API on 127.0.0.1, for tests: POST /v1/files (multipart, purpose=batch),
// POST /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content.
// Each batch replays one documented lifecycle, a step per GET of the batch (platform.openai.com/docs/guides/
// batch, "4. Check the status of a batch": validating, failed, in_progress, finalizing, completed, expired,
// cancelling, cancelled), chosen by `lifecycle`:
//   completed: validating -> in_progress -> finalizing -> completed, every request in the output file;
//   failed: validating -> failed, the batch object's `errors` saying why (its input file was refused), no
//     file;
//   expired: in_progress -> expired, the first half answered, the rest in the error file with code
//     batch_expired (help.openai.com/en/articles/9197833, "What happens if the API doesn't complete my
//     request within the promised time?": remaining work is cancelled and completed work is returned);
//   cancelled: in_progress -> cancelling -> cancelled (on a cancel call), the answered part in the output;
//   line-errors: completed, every `errorPeriod`th request in the error file with its response's status_code
//     400 and an error body (platform.openai.com/docs/api-reference/batch/request-output: `response` with
//     `status_code` and `body`, or `error` with `code` and `message`).
// GET /v1/batches?limit&after lists the batches newest first, each with the `metadata` it was made with
// (platform.openai.com/docs/api-reference/batch/list: {object: list, data, first_id, last_id, has_more}).
// `holdCreate`: a create is taken (the batch made, counted) and never answered, as when the caller dies
// while the provider answers; "unmade": nor is the batch made, as when the caller dies before the provider
// took the create. `whenSubmitted()` resolves at the next create taken.
// Replies are the chat completions scripts/fake-openai.mjs answers online (its policies and usage), so a
// batch build's results can be compared with an online build's.
import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { POLICIES, usageOf } from "./fake-openai.mjs";

const sha = (s) => createHash("sha256").update(s).digest("hex");

/** The chat completion the online fake answers for this body (its plain path: no fault). */
export function completionFor(opts, body) {
  const out = POLICIES[opts.policy ?? "voice-command"](body, opts);
  const content = typeof out === "object" ? out.content : out;
  const finish = typeof out === "object" && out.finish_reason ? out.finish_reason : "stop";
  const key = sha(JSON.stringify(body.messages) + JSON.stringify(body.response_format ?? null));
  return {
    id: `chatcmpl-${key.slice(0, 12)}`,
    object: "chat.completion",
    model: body.model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }],
    usage: usageOf(opts, body, content),
  };
}

const STEPS = {
  completed: ["validating", "in_progress", "finalizing", "completed"],
  failed: ["validating", "failed"],
  expired: ["in_progress", "expired"],
  cancelled: ["in_progress", "in_progress"],
  "line-errors": ["validating", "in_progress", "completed"],
};

/** The part of a multipart body that is the uploaded file. */
function filePart(raw, type) {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  const mark = `--${boundary[1] ?? boundary[2]}`;
  for (const part of raw.split(mark)) {
    if (!/name="file"/.test(part)) continue;
    const start = part.indexOf("\r\n\r\n") + 4;
    return part.slice(start, part.lastIndexOf("\r\n"));
  }
  return "";
}

export function startFakeBatches(options = {}) {
  const opts = {
    lifecycle: "completed",
    errorPeriod: 5,
    policy: "voice-command",
    usage: "fixed",
    ...options,
  };
  const files = new Map();
  const batches = new Map();
  const stats = { submitted: 0, lines: 0, polls: 0, cancels: 0, uploads: 0 };
  let n = 0;
  const waiting = [];
  const json = (res, status, value) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));

  /** Makes the output and error files of a batch at its end; `answered`: how many lines are answered. */
  function finish(batch, answered, lineErrors) {
    const out = [];
    const errors = [];
    batch.lines.forEach((line, i) => {
      const id = `batch_req_${batch.id}_${i}`;
      if (i >= answered) {
        const code = batch.status === "expired" ? "batch_expired" : "batch_cancelled";
        const message =
          code === "batch_expired"
            ? "This request could not be executed before the completion window expired."
            : "This request was not executed because the batch was cancelled.";
        errors.push({ id, custom_id: line.custom_id, response: null, error: { code, message } });
      } else if (lineErrors && (i + 1) % opts.errorPeriod === 0) {
        const body = {
          error: { message: "Invalid value for 'temperature'", type: "invalid_request_error" },
        };
        errors.push({ id, custom_id: line.custom_id, response: { status_code: 400, body }, error: null });
      } else {
        const body = completionFor(opts, line.body);
        out.push({ id, custom_id: line.custom_id, response: { status_code: 200, body }, error: null });
      }
    });
    const save = (rows) => {
      if (!rows.length) return null;
      const id = `file-${++n}`;
      files.set(id, rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
      return id;
    };
    batch.output_file_id = save(out);
    batch.error_file_id = save(errors);
  }

  function step(batch) {
    if (["completed", "failed", "expired", "cancelled"].includes(batch.status)) return;
    if (batch.status === "cancelling") {
      batch.status = "cancelled";
      return finish(batch, Math.floor(batch.lines.length / 2), false);
    }
    const steps = STEPS[batch.lifecycle];
    batch.status = steps[Math.min(steps.indexOf(batch.status) + 1, steps.length - 1)];
    if (batch.status === "completed") finish(batch, batch.lines.length, batch.lifecycle === "line-errors");
    if (batch.status === "expired") finish(batch, Math.floor(batch.lines.length / 2), false);
    if (batch.status === "failed")
      batch.errors = {
        object: "list",
        data: [{ code: "invalid_json_line", message: "line 1 is not JSON" }],
      };
  }

  const view = (batch) => ({
    id: batch.id,
    object: "batch",
    endpoint: batch.endpoint,
    errors: batch.errors ?? null,
    input_file_id: batch.input_file_id,
    completion_window: "24h",
    status: batch.status,
    output_file_id: batch.output_file_id ?? null,
    error_file_id: batch.error_file_id ?? null,
    request_counts: { total: batch.lines.length, completed: 0, failed: 0 },
    metadata: batch.metadata ?? null,
    created_at: batch.created_at,
  });

  /** The batches newest first, `limit` of them after the one named `after`. */
  function list(url) {
    const all = [...batches.values()].reverse();
    const after = url.searchParams.get("after");
    const from = after ? all.findIndex((batch) => batch.id === after) + 1 : 0;
    const data = all.slice(from, from + Number(url.searchParams.get("limit") ?? 20)).map(view);
    const last = data.at(-1)?.id ?? null;
    return {
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: last,
      has_more: from + data.length < all.length,
    };
  }

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url, "http://x");
      let m;
      if (req.method === "POST" && url.pathname === "/v1/files") {
        stats.uploads++;
        const id = `file-${++n}`;
        files.set(id, filePart(raw, req.headers["content-type"] ?? ""));
        return json(res, 200, { id, object: "file", purpose: "batch", bytes: raw.length });
      }
      if (req.method === "POST" && url.pathname === "/v1/batches") {
        if (opts.holdCreate === "unmade") return void waiting.splice(0).forEach((resolve) => resolve());
        const made = JSON.parse(raw);
        const text = files.get(made.input_file_id) ?? "";
        const lines = text
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l));
        stats.submitted++;
        stats.lines += lines.length;
        const lifecycle =
          typeof opts.lifecycle === "function" ? opts.lifecycle(stats.submitted) : opts.lifecycle;
        const id = `batch_${++n}`;
        const status = STEPS[lifecycle][0];
        const batch = {
          id,
          lines,
          lifecycle,
          status,
          endpoint: made.endpoint,
          input_file_id: made.input_file_id,
          metadata: made.metadata,
          created_at: Math.floor(Date.now() / 1000),
        };
        batches.set(id, batch);
        for (const resolve of waiting.splice(0)) resolve();
        if (opts.holdCreate) return; // never answered: the caller is killed meanwhile
        return json(res, 200, view(batch));
      }
      if (req.method === "GET" && url.pathname === "/v1/batches") {
        stats.lists = (stats.lists ?? 0) + 1;
        return json(res, 200, list(url));
      }
      if ((m = /^\/v1\/batches\/([^/]+)$/.exec(url.pathname)) && req.method === "GET") {
        const batch = batches.get(m[1]);
        if (!batch) return json(res, 404, { error: { message: "No such batch" } });
        stats.polls++;
        step(batch);
        return json(res, 200, view(batch));
      }
      if ((m = /^\/v1\/batches\/([^/]+)\/cancel$/.exec(url.pathname)) && req.method === "POST") {
        const batch = batches.get(m[1]);
        if (!batch) return json(res, 404, { error: { message: "No such batch" } });
        stats.cancels++;
        batch.status = "cancelling";
        return json(res, 200, view(batch));
      }
      if ((m = /^\/v1\/files\/([^/]+)\/content$/.exec(url.pathname)) && req.method === "GET") {
        const text = files.get(m[1]);
        if (text === undefined) return json(res, 404, { error: { message: "No such file" } });
        return res.writeHead(200, { "content-type": "application/octet-stream" }).end(text);
      }
      json(res, 404, { error: { message: `no route ${req.method} ${url.pathname}` } });
    });
  });
  return new Promise((resolve) =>
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        stats,
        batches,
        set: (changes) => Object.assign(opts, changes),
        whenSubmitted: () => new Promise((resolve) => waiting.push(resolve)),
        close: () => new Promise((r) => (server.closeAllConnections?.(), server.close(() => r()))),
      });
    }),
  );
}
