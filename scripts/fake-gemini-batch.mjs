// The Batch API of the fake Gemini server (scripts/fake-gemini.mjs serves it on the same port): POST
// /v1beta/models/{model}:batchGenerateContent with inlined requests, GET /v1beta/batches/{id}, POST
// /v1beta/batches/{id}:cancel and GET /v1beta/batches?pageSize&pageToken. Shapes: the reference
// (ai.google.dev/api/batch-mode: the request body {batch: {displayName, inputConfig: {requests: {requests:
// [{request, metadata}]}}}}, an Operation answered; BatchStats requestCount, successfulRequestCount,
// failedRequestCount, pendingRequestCount) and googleapis/js-genai at commit
// 6e9b35c45e21f0d37179a24d29dca01ebed698e6 (src/converters/_batches_converters.ts: the operation's name
// batches/ID, its metadata.displayName, state, createTime, model and
// output.inlinedResponses.inlinedResponses [{response | error, metadata}], the list's operations and
// nextPageToken; src/_transformers.ts tJobState: the REST states BATCH_STATE_PENDING, RUNNING, SUCCEEDED,
// FAILED, CANCELLED, EXPIRED). A failed or cancelled batch's operation carries `error`, a google.rpc.Status
// (js-genai src/types.ts BatchJob.error: "Only populated when the job's state is JOB_STATE_FAILED or
// JOB_STATE_CANCELLED"). A batch steps once per GET, its lifecycle chosen by `batchLifecycle`:
//   succeeded: PENDING -> RUNNING -> SUCCEEDED, every request answered as generateContent answers it online;
//   failed: PENDING -> FAILED, no output;
//   expired: RUNNING -> EXPIRED ("running or pending for more than 48 hours", the guide's job states), no
//     output;
//   cancelled: RUNNING until a cancel, then CANCELLED, no output;
//   line-errors: SUCCEEDED, every `batchErrorPeriod`th request answered with an error (a google.rpc.Status).
// `holdCreate`: a create is taken (the batch made, counted) and never answered, as when the caller dies
// while the provider answers; `whenSubmitted()` resolves at the next create taken.
import { createHash } from "node:crypto";

const STEPS = {
  succeeded: ["PENDING", "RUNNING", "SUCCEEDED"],
  failed: ["PENDING", "FAILED"],
  expired: ["RUNNING", "EXPIRED"],
  cancelled: ["RUNNING", "RUNNING"],
  "line-errors": ["PENDING", "RUNNING", "SUCCEEDED"],
};
const TERMINAL = ["SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED"];

/** The batch endpoints: `answer(model, request)` is {status, body} as generateContent answers that request;
 *  `keyProblem(req, model)` the key check online requests get. */
export function geminiBatches({ opts, stats, answer, keyProblem, send }) {
  const batches = new Map();
  const counts = { submitted: 0, requests: 0, polls: 0, cancels: 0, lists: 0, largest: 0 };
  stats.batches = counts;
  const waiting = [];
  let n = 0;

  const view = (batch) => {
    const done = TERMINAL.includes(batch.state);
    const answered = batch.responses?.filter((row) => row.response).length ?? 0;
    const total = batch.requests.length;
    const metadata = {
      name: batch.name,
      model: `models/${batch.model}`,
      displayName: batch.displayName,
      createTime: batch.createTime,
      updateTime: batch.createTime,
      ...(done ? { endTime: batch.createTime } : {}),
      state: `BATCH_STATE_${batch.state}`,
      batchStats: {
        requestCount: String(total),
        ...(done
          ? { successfulRequestCount: String(answered), failedRequestCount: String(total - answered) }
          : { pendingRequestCount: String(total) }),
      },
      ...(batch.responses ? { output: { inlinedResponses: { inlinedResponses: batch.responses } } } : {}),
    };
    return {
      name: batch.name,
      metadata,
      ...(done ? { done } : {}),
      ...(batch.error ? { error: batch.error } : {}),
    };
  };

  function step(batch) {
    if (TERMINAL.includes(batch.state)) return;
    if (batch.cancelling) {
      batch.state = "CANCELLED";
      batch.error = { code: 1, message: "The batch was cancelled.", status: "CANCELLED" };
      return;
    }
    const steps = STEPS[batch.lifecycle];
    batch.state = steps[Math.min(steps.indexOf(batch.state) + 1, steps.length - 1)];
    if (batch.state === "FAILED")
      batch.error = { code: 3, message: "The batch's input could not be read.", status: "INVALID_ARGUMENT" };
    if (batch.state !== "SUCCEEDED") return;
    batch.responses = batch.requests.map(({ request, metadata }, i) => {
      if (batch.lifecycle === "line-errors" && (i + 1) % opts.batchErrorPeriod === 0) {
        const error = {
          code: 400,
          message: "Request contains an invalid argument.",
          status: "INVALID_ARGUMENT",
        };
        return { error, metadata };
      }
      const { status, body } = answer(batch.model, request);
      return status === 200 ? { response: body, metadata } : { error: body.error, metadata };
    });
  }

  function create(res, model, raw) {
    const { batch: asked } = JSON.parse(raw);
    const requests = asked.inputConfig.requests.requests;
    counts.submitted++;
    counts.requests += requests.length;
    counts.largest = Math.max(counts.largest, Buffer.byteLength(raw));
    const lifecycle = opts.batchLifecycle ?? "succeeded";
    const id = createHash("sha256").update(`${++n}${raw}`).digest("hex").slice(0, 16);
    const batch = {
      name: `batches/${id}`,
      model,
      displayName: asked.displayName,
      createTime: new Date().toISOString(),
      lifecycle,
      state: STEPS[lifecycle][0],
      requests,
    };
    batches.set(batch.name, batch);
    for (const resolve of waiting.splice(0)) resolve();
    if (opts.holdCreate) return; // never answered: the caller is killed meanwhile
    send(res, 200, view(batch));
  }

  /** The batches newest first, a page of `pageSize` after the token (the index of the next). */
  function list(res, url) {
    counts.lists++;
    const all = [...batches.values()].reverse();
    const from = Number(url.searchParams.get("pageToken") ?? 0);
    const size = Number(url.searchParams.get("pageSize") ?? 50);
    const operations = all.slice(from, from + size).map(view);
    const more = from + size < all.length;
    send(res, 200, { operations, ...(more ? { nextPageToken: String(from + size) } : {}) });
  }

  const notFound = (res) =>
    send(res, 404, { error: { code: 404, message: "Batch not found.", status: "NOT_FOUND" } });

  /** Serves a batch endpoint; false when the path is none of them. */
  function handle(req, res, url, raw) {
    const made = /^\/v1beta\/models\/([^/:]+):batchGenerateContent$/.exec(url.pathname);
    const one = /^\/v1beta\/(batches\/[^/:]+)(:cancel)?$/.exec(url.pathname);
    if (!made && !one && url.pathname !== "/v1beta/batches") return false;
    const key = keyProblem(req, made ? decodeURIComponent(made[1]) : "");
    if (key) return (send(res, key.status, key.text ?? key.body), true);
    if (made && req.method === "POST") return (create(res, decodeURIComponent(made[1]), raw), true);
    if (!one && req.method === "GET") return (list(res, url), true);
    const batch = one ? batches.get(decodeURIComponent(one[1])) : undefined;
    if (!batch) return (notFound(res), true);
    if (one[2] && req.method === "POST") {
      counts.cancels++;
      if (!TERMINAL.includes(batch.state)) batch.cancelling = true;
      return (send(res, 200, {}), true);
    }
    if (req.method !== "GET") return (notFound(res), true);
    counts.polls++;
    step(batch);
    return (send(res, 200, view(batch)), true);
  }

  return { handle, batches, whenSubmitted: () => new Promise((resolve) => waiting.push(resolve)) };
}
