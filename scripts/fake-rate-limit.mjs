// The fake server's rate limit (scripts/fake-openai.mjs --rate-limit RPM[:BURST]): a token bucket of BURST
// requests (default RPM, as OpenAI's limit of RPM a minute) refilled at RPM a minute. Every reply carries
// OpenAI's x-ratelimit-*-requests headers; an empty bucket answers 429 with OpenAI's rate_limit_exceeded
// body and no Retry-After, as scripts/provider-replies/openai-rate-limit-requests.json records.

/** A Go-style duration as OpenAI writes its reset headers: 20ms, 1.5s, 6m0s (rounded up to the ms). */
export function goDuration(ms) {
  const whole = Math.ceil(ms);
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = (whole % 60_000) / 1000;
  return minutes ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** `RPM` or `RPM:BURST` (the command line's form) as { requestsPerMinute, burst }. */
export function parseRateLimit(text) {
  const [rpm, burst] = String(text).split(":").map(Number);
  if (!(rpm > 0) || (burst !== undefined && !(burst >= 1)))
    throw new Error("--rate-limit takes RPM[:BURST]");
  return { requestsPerMinute: rpm, ...(burst !== undefined ? { burst } : {}) };
}

export function rateLimiter({ requestsPerMinute, burst = requestsPerMinute }) {
  const perMs = requestsPerMinute / 60_000;
  let tokens = burst;
  let at = Date.now();
  return {
    /** Takes one request from the bucket: whether it may pass, and the headers of the reply. */
    take(model) {
      const now = Date.now();
      tokens = Math.min(burst, tokens + (now - at) * perMs);
      at = now;
      const ok = tokens >= 1;
      if (ok) tokens -= 1;
      const remaining = Math.floor(tokens);
      const headers = {
        "x-ratelimit-limit-requests": String(burst),
        "x-ratelimit-remaining-requests": String(remaining),
        // From the whole requests left, so that limit, remaining and reset never overstate the refill rate.
        "x-ratelimit-reset-requests": goDuration((burst - remaining) / perMs),
      };
      if (ok) return { ok, headers };
      const again = goDuration((1 - tokens) / perMs);
      const body = JSON.stringify({
        error: {
          message:
            `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): ` +
            `Limit ${burst}, Used ${burst}, Requested 1. Please try again in ${again}. ` +
            "Visit https://platform.openai.com/account/rate-limits to learn more.",
          type: "requests",
          param: null,
          code: "rate_limit_exceeded",
        },
      });
      return { ok, headers: { ...headers, "content-type": "application/json" }, body };
    },
  };
}
