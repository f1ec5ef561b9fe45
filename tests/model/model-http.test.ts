// The model client's HTTP layer (node:http with a keep-alive agent per route): connections reused and never
// more than the route's concurrency, a redirect refused with its target named (a POST is not silently
// re-sent as a GET), a reply a server compressed unasked still read. Real servers on 127.0.0.1, the CLI as a
// user runs it.
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import type { AddressInfo } from "node:net";
import { Project } from "../support/rig.js";
import { startFake } from "../support/fake.js";
import { VOICE_SAMPLE_ITEMS } from "../support/helpers.js";

const closers: (() => Promise<void>)[] = [];
const projects: Project[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  while (projects.length) projects.pop()!.remove();
});

const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";
const N = VOICE_SAMPLE_ITEMS; // requests of the voice-command sample

function project(url: string, concurrency: number): Project {
  const p = new Project();
  projects.push(p);
  p.write(
    "routes.yaml",
    `routes:
  fake:
    base_url: ${url}
    concurrency: ${concurrency}
    timeout_s: 30
    retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 60 }
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`,
  );
  return p;
}

const replies = (p: Project) =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { error: string | null; text: string });

/** A plain server answering every POST with `answer`; closed after the test. */
async function serve(
  answer: (res: import("node:http").ServerResponse, req: import("node:http").IncomingMessage) => void,
  host = "127.0.0.1",
): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res, req));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  const where = host.includes(":") ? `[${host}]` : host;
  return `http://${where}:${(server.address() as AddressInfo).port}/v1`;
}

describe("the model client's connections", () => {
  it("reuses at most the route's concurrency of keep-alive connections for every request", async () => {
    const fake = await startFake({});
    closers.push(() => fake.close());
    const p = project(fake.url, 3);
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.requests).toBe(fake.stats.bodies.size); // each distinct body once
    expect(fake.stats.requests).toBeGreaterThan(N / 2);
    expect(fake.stats.maxOpen).toBeLessThanOrEqual(3);
    expect(fake.stats.connections).toBeLessThanOrEqual(3);
  });

  it("refuses a redirect, naming where it points, instead of following it", async () => {
    const url = await serve((res) =>
      res.writeHead(308, { location: "https://elsewhere.example/v1/chat/completions" }).end(),
    );
    const p = project(url, 2);
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: every request refused
    const all = replies(p);
    expect(all.length).toBe(N);
    for (const x of all)
      expect(x.error).toMatch(
        /^HTTP 308: redirected to https:\/\/elsewhere\.example\/v1\/chat\/completions; set the route's/,
      );
  });

  it("reads a reply that a server gzipped unasked", async () => {
    const completion = {
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "압축된 답" }, finish_reason: "stop" }],
    };
    const url = await serve((res) =>
      res
        .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
        .end(gzipSync(JSON.stringify(completion))),
    );
    const p = project(url, 2);
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(replies(p).every((x) => x.error === null && x.text === "압축된 답")).toBe(true);
  });

  it("sends to a route whose base_url is an IPv6 literal, at the path the base_url names", async () => {
    const completion = {
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    };
    const seen = new Set<string>();
    const url = await serve((res, req) => {
      seen.add(`${req.method} ${req.url} ${req.headers.host}`);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion));
    }, "::1");
    const p = project(url.replace("/v1", "/api/v1/"), 2);
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(replies(p).every((x) => x.error === null && x.text === "ok")).toBe(true);
    const port = new URL(url).port;
    expect([...seen]).toEqual([`POST /api/v1/chat/completions [::1]:${port}`]);
  });
});
