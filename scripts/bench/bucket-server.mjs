// A rate limiter held out from medbench's pacer, as providers and gateways enforce limits: an HTTP server
// in front of the fake OpenAI-compatible server (scripts/fake-openai.mjs) that lets a request through
// while its token bucket holds enough and answers 429 otherwise, with the headers of one variant:
//   short-window  600 requests/minute enforced as 10 a second (a bucket of 10): Retry-After, retry-after-ms
//                 and x-ratelimit-*-requests that claim the minute's limit (limit 600, reset ~100 ms), as
//                 a gateway counting per second but reporting per minute does
//   tokens        a tokens-per-minute limit with OpenAI's token headers only (x-ratelimit-*-tokens), the
//                 tokens counted the server's way (the messages' characters / 4 + max_tokens), not
// medbench's
//   openai        OpenAI's requests headers, consistent with the bucket (limit, remaining, reset to full)
//   headerless    a bare 429 with no header at all
//   http-date     Retry-After as an HTTP date only (RFC 9110 §10.2.3)
//   groq          Groq's headers: retry-after in seconds, x-ratelimit-reset-requests as "1m30.5s" (to full)
// `perMinute(t)`: the limit at t ms after the first request (a limit that drops is a function of time).
// GET /stats: the requests, the 429s, and the units (requests or tokens) allowed and answered.
import http from "node:http";

/** A Go-style duration as OpenAI and Groq write reset headers: 20ms, 1.5s, 1m30.5s. */
export function goDuration(ms) {
  const whole = Math.ceil(ms);
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = (whole % 60_000) / 1000;
  return minutes ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** The tokens a request counts for, as this server counts them. */
function tokensOf(body) {
  const chars = (body.messages ?? []).reduce((n, m) => n + String(m.content ?? "").length, 0);
  return Math.ceil(chars / 4) + (body.max_tokens ?? body.max_completion_tokens ?? 0);
}

/** The headers of a reply (ok or 429) for `variant`, given the bucket's state. */
function headersOf(variant, s) {
  const toOne = Math.max(0, (s.need - s.level) / s.perMs);
  const toFull = Math.max(0, (s.burst - Math.floor(s.level)) / s.perMs);
  const now = Date.now();
  switch (variant) {
    case "short-window":
      return {
        "retry-after": String(Math.ceil(toOne / 1000)),
        "retry-after-ms": String(Math.ceil(toOne)),
        "x-ratelimit-limit-requests": "600",
        "x-ratelimit-remaining-requests": String(Math.floor(s.level)),
        "x-ratelimit-reset-requests": goDuration(toFull),
      };
    case "tokens":
      return {
        "x-ratelimit-limit-tokens": String(s.burst),
        "x-ratelimit-remaining-tokens": String(Math.floor(s.level)),
        "x-ratelimit-reset-tokens": goDuration(toFull),
      };
    case "openai":
      return {
        "x-ratelimit-limit-requests": String(s.burst),
        "x-ratelimit-remaining-requests": String(Math.floor(s.level)),
        "x-ratelimit-reset-requests": goDuration(toFull),
      };
    case "http-date":
      return s.ok ? {} : { "retry-after": new Date(now + toOne).toUTCString() };
    case "groq":
      return {
        ...(s.ok ? {} : { "retry-after": String(Math.ceil(toOne / 1000)) }),
        "x-ratelimit-limit-requests": String(s.burst),
        "x-ratelimit-remaining-requests": String(Math.floor(s.level)),
        "x-ratelimit-reset-requests": goDuration(toFull),
      };
    default:
      return {};
  }
}

/** Starts the limiter on 127.0.0.1 (a free port) before `upstream` (the fake's /v1 URL). */
export async function bucketServer({ variant, upstream, perMinute, burst }) {
  const units = variant === "tokens" ? "tokens" : "requests";
  const stats = { requests: 0, limited: 0, answered: 0, answeredUnits: 0, first: 0, last: 0 };
  const limitedAt = []; // each 429's time after the first request, ms
  let level = burst;
  let at = 0;
  let allowed = burst; // units the bucket allowed from the first request on
  const refill = (now) => {
    if (!stats.first) {
      stats.first = now;
      at = now;
    }
    const added = ((now - at) * perMinute(now - stats.first)) / 60_000;
    allowed += added;
    level = Math.min(burst, level + added);
    at = now;
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      stats.requests++;
      const now = Date.now();
      refill(now);
      let body = {};
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        /* forwarded as it is: the fake answers it */
      }
      const need = units === "tokens" ? tokensOf(body) : 1;
      const ok = level >= need;
      if (ok) level -= need;
      const perMs = perMinute(now - stats.first) / 60_000;
      const headers = headersOf(variant, { ok, need, level, burst, perMs });
      if (!ok) {
        stats.limited++;
        limitedAt.push(now - stats.first);
        const error = {
          message: "Rate limit reached. Please try again later.",
          code: "rate_limit_exceeded",
        };
        res.writeHead(429, { ...headers, "content-type": "application/json" });
        return res.end(JSON.stringify({ error }));
      }
      forward(raw, req, res, headers, need);
    });
  });
  function forward(raw, req, res, headers, need) {
    const url = new URL(upstream.replace(/\/v1$/, "") + req.url);
    const out = http.request(url, { method: req.method, headers: req.headers, agent }, (up) => {
      res.writeHead(up.statusCode, { ...up.headers, ...headers });
      up.pipe(res);
      up.on("end", () => {
        stats.answered++;
        stats.answeredUnits += need;
        stats.last = Date.now();
      });
    });
    out.on("error", () => res.destroy());
    out.end(raw);
  }
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}/v1`;
  const report = () => {
    // The allowance from the first request to the last answer (none refilled after the last answer).
    const seconds = (stats.last - stats.first) / 1000;
    return { ...stats, units, seconds, allowedUnits: allowed, limitedAt };
  };
  const close = () =>
    new Promise((resolve) => {
      agent.destroy();
      server.closeAllConnections();
      server.close(resolve);
    });
  return { url, report, close };
}
