// One POST over node:http(s) through a keep-alive agent per route: at most `concurrency` sockets, reused
// across requests (fetch reached about a quarter of node:http's requests per second). A try has
// one timer for its whole limit (connect, send, wait, read), which destroys the request and its socket, so
// a server that accepts and never answers, or stalls mid-body, frees the socket either way. (The socket's
// own idle limit is the agent's, for idle sockets: setting it per request cost two timer updates each.)
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import type { Readable } from "node:stream";

// Loaded when a route is https, or a reply compressed: a plain-http route (a local server) needs neither
// (https and tls, 2 ms of CPU a process; zlib 1 ms). Kept once loaded: a require costs a lookup per reply.
let httpsModule: typeof import("node:https") | undefined;
const https = () => (httpsModule ??= require("node:https") as typeof import("node:https"));
let zlibModule: typeof import("node:zlib") | undefined;
const zlib = () => (zlibModule ??= require("node:zlib") as typeof import("node:zlib"));

export interface HttpReply {
  status: number;
  /** A redirect's target (a 3xx is not followed: the route's base_url should name the server itself). */
  location: string | null;
  /** The Content-Type header (a 200 may be an event stream or an HTML page, not JSON). */
  contentType: string | null;
  /** Every response header (a rate limit's are read from them). */
  headers: IncomingHttpHeaders;
  text: string;
}

/** Why a try ended without a reply: a timeout, the caller's abort, or the connection (with its code). */
export class HttpError extends Error {
  constructor(
    readonly why: "timeout" | "aborted" | "connection" | "too_large",
    readonly code: string,
  ) {
    super(code);
  }
}

export interface PoolKey {
  name: string;
  base_url: string;
  concurrency: number;
}

const agents = new Map<string, HttpAgent>();
const IDLE_SOCKET_MS = 4_000;

/** The route's agent: keep-alive, maxSockets = the route's concurrency, one per route in this process. */
export function agentFor(route: PoolKey): HttpAgent {
  const secure = new URL(route.base_url).protocol === "https:";
  const id = `${route.name}\n${route.base_url}\n${route.concurrency}`;
  let agent = agents.get(id);
  if (!agent) {
    const options = {
      keepAlive: true,
      maxSockets: Math.max(1, route.concurrency),
      scheduling: "lifo" as const,
      // An idle socket is closed before the common 5 s server keep-alive limit (uvicorn's, Node's), lest a
      // request go out on a socket the server is closing; a server's Keep-Alive: timeout=N hint, when
      // shorter, wins. A request's own timeout replaces this one while it holds the socket.
      timeout: IDLE_SOCKET_MS,
    };
    agent = secure ? new (https().Agent)(options) : new HttpAgent(options);
    agents.set(id, agent);
  }
  return agent;
}

/** Where a route's requests go, prepared once per route: node:http's options and the fixed headers. */
export interface Target {
  https: boolean;
  hostname: string;
  port: string;
  path: string;
  /** The request's headers but its length, as name, value pairs: the route's, then Host and (for a URL's
   *  userinfo, which the registry refuses) Authorization, as node:http adds them from its options. Given as
   *  a list, node:http writes them as they are: as an object, it stored each by setHeader and looked up
   *  Host, Authorization and Expect again, on every request (about 30 ms of CPU a 2,070-item first build's
   *  sending, a tenth of node:http's). */
  headerList: string[];
  agent: HttpAgent;
  /** The largest reply body read (decompressed bytes); a larger one ends the try (HttpError too_large). */
  maxReplyBytes?: number;
}

export function targetOf(url: URL, headers: Record<string, string>, agent: HttpAgent): Target {
  const headerList = Object.entries(headers).flat();
  const named = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name);
  // url.host: the hostname (an IPv6 literal in brackets) and the port unless it is the scheme's own.
  if (!named("host")) headerList.push("Host", url.host);
  if ((url.username || url.password) && !named("authorization")) {
    const auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headerList.push("Authorization", `Basic ${Buffer.from(auth).toString("base64")}`);
  }
  return {
    https: url.protocol === "https:",
    // node:http wants an IPv6 literal without its brackets (as its own urlToHttpOptions gives it)
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    headerList,
    agent,
  };
}

// The tries in flight per signal, ended by one listener on it: a listener added and removed per request
// cost more than the rest of a request's bookkeeping.
const waiting = new WeakMap<AbortSignal, Set<() => void>>();
function onAbortOf(signal: AbortSignal, abort: () => void): () => void {
  let set = waiting.get(signal);
  if (!set) {
    const tries = (set = new Set());
    waiting.set(signal, tries);
    signal.addEventListener("abort", () => [...tries].forEach((abort) => abort()), { once: true });
  }
  set.add(abort);
  return () => set.delete(abort);
}

/** POSTs `payload` (JSON, UTF-8) and reads the whole reply as UTF-8 text; rejects with HttpError. */
export function postJson(
  target: Target,
  payload: Buffer,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const send = target.https ? https().request : httpRequest;
    let settled = false;
    let forget: (() => void) | null = null;
    const finish = (err: HttpError | null, reply?: HttpReply) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      forget?.();
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(reply!);
    };
    const onAbort = () => finish(new HttpError("aborted", "aborted"));
    const timer = setTimeout(() => finish(new HttpError("timeout", "timeout")), timeoutMs);
    const req = send({
      method: "POST",
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      agent: target.agent,
      headers: [...target.headerList, "content-length", String(payload.length)],
    });
    req.on("error", (e: NodeJS.ErrnoException) => finish(new HttpError("connection", e.code ?? e.message)));
    req.on("response", (res: IncomingMessage) => readReply(res, target.maxReplyBytes ?? Infinity, finish));
    if (signal?.aborted) return onAbort();
    if (signal) forget = onAbortOf(signal, onAbort);
    req.end(payload);
  });
}

/** Reads a response's body as it arrives and settles the try with it. The body is bounded before it is held
 *  whole: a declared length past `limit` ends the try at once, and the bytes received (after
 *  decompression) are counted as they come. */
function readReply(
  res: IncomingMessage,
  limit: number,
  finish: (err: HttpError | null, reply?: HttpReply) => void,
): void {
  const chunks: Buffer[] = [];
  const tooLarge = () => finish(new HttpError("too_large", String(limit)));
  if (Number(res.headers["content-length"] ?? 0) > limit) return tooLarge();
  let received = 0;
  const stream = decoded(res);
  stream.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) tooLarge();
    else chunks.push(chunk);
  });
  stream.on("error", (e: NodeJS.ErrnoException) => finish(new HttpError("connection", e.code ?? e.message)));
  // The connection lost mid-body (Node reports it on the response, not the request).
  res.on("aborted", () => finish(new HttpError("connection", "ECONNRESET")));
  res.on("error", (e: NodeJS.ErrnoException) => finish(new HttpError("connection", e.code ?? e.message)));
  stream.on("end", () => {
    let text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // as fetch's text() decodes
    finish(null, {
      status: res.statusCode ?? 0,
      location: res.headers.location ?? null,
      contentType: res.headers["content-type"] ?? null,
      headers: res.headers,
      text,
    });
  });
}

/** The body as sent, or decompressed when a server compressed it unasked (we send no accept-encoding). */
function decoded(res: IncomingMessage): Readable {
  const enc = String(res.headers["content-encoding"] ?? "").toLowerCase();
  const inflate =
    enc === "gzip" || enc === "x-gzip"
      ? zlib().createGunzip()
      : enc === "deflate"
        ? zlib().createInflate()
        : enc === "br"
          ? zlib().createBrotliDecompress()
          : null;
  return inflate ? res.pipe(inflate) : res;
}
