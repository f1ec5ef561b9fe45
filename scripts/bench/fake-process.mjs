// What the model benchmarks share: the fake OpenAI-compatible server as its own process (so that the
// process measured pays nothing for it), the load average, min / median / max over interleaved pairs, a
// synthetic request body, and the `node -e` sources of a bare node:http sender.
import { spawn } from "node:child_process";
import { cp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const repo = path.resolve(import.meta.dirname, "../..");

export const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const spread = (xs, d = 2) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(d)} / ${median(s).toFixed(d)} / ${s[s.length - 1].toFixed(d)}`;
};

/**
 * The fake server as its own process, keeping no body; `record`: a file it appends every body to; `extra`:
 * more of its options (e.g. ["--rate-limit", "600"]).
 */
export async function server(record, extra = []) {
  const args = [path.join(repo, "scripts/fake-openai.mjs"), "--port", "0", "--keep-received", "0", ...extra];
  const child = spawn("node", record ? [...args, "--record", record] : args, {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /on (http:\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`the fake server exited ${code}`)));
  });
  const stats = async () => (await fetch(url.replace(/\/v1$/, "/stats"))).json();
  // A bench that throws (a measured run failed) exits without its close: the server must not outlive it.
  const killOnExit = () => child.kill("SIGTERM");
  process.once("exit", killOnExit);
  const close = () =>
    new Promise((r) => {
      process.off("exit", killOnExit);
      child.removeAllListeners("exit");
      child.once("exit", r);
      child.kill("SIGTERM");
    });
  return { url, stats, close };
}

/** One route of a routes.yaml, `name`, to the fake server at `url`, thinking off by a flag. */
export const fakeRouteYaml = (name, url, concurrency) =>
  `  ${name}:\n    base_url: ${url}\n    concurrency: ${concurrency}\n` +
  `    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n`;

/** A project's routes.yaml with the route `fake` to the fake server at `url`. */
export const writeFakeRoutes = (dir, url, concurrency) =>
  writeFile(path.join(dir, "routes.yaml"), `routes:\n${fakeRouteYaml("fake", url, concurrency)}`);

/** A project folder under `parent`: a copy of the repository's specs/ (the routes are the caller's). */
export async function specsProject(parent, name) {
  const dir = path.join(parent, name);
  await cp(path.join(repo, "specs"), path.join(dir, "specs"), { recursive: true });
  return dir;
}

/** The environment of a build sharing the S3 test server at `endpoint` (scripts/s3-server.mjs). */
export const remoteEnv = (endpoint) => ({
  ...process.env,
  NO_COLOR: "1",
  MEDBENCH_REMOTE: "s3://medbench/bench",
  MEDBENCH_REMOTE_ENDPOINT: endpoint,
  AWS_ACCESS_KEY_ID: "S3RVER",
  AWS_SECRET_ACCESS_KEY: "S3RVER",
  AWS_REGION: "us-east-1",
});

// A synthetic request body, i its index (about 3.2 KB, mostly Korean text, as a voice-command request):
// every index a distinct body. It names no variable but SYNTHETIC_SYSTEM, so that its source can be given
// to a `node -e` script beside that constant's.
export const SYNTHETIC_SYSTEM = "수술 로봇에 내린 음성 명령을 정해진 JSON으로 바꾸세요. ".repeat(40);
export const syntheticBody = (i) =>
  JSON.stringify({
    max_tokens: 512,
    messages: [
      { content: SYNTHETIC_SYSTEM, role: "system" },
      { content: `명령 ${i}: 카메라를 왼쪽으로 10도 돌려`, role: "user" },
    ],
    model: "bench",
    temperature: 0,
  });

// Source text for a `node -e` loop: `post(body)` sends one body over a keep-alive node:http agent and
// parses the reply, dropping it (`http`, `agent` and `url` in scope).
export const HTTP_POST = `const post = (body) => new Promise((resolve, reject) => {
  const data = Buffer.from(body);
  const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json",
    "content-length": data.length } }, (res) => { const chunks = []; res.on("data", (d) => chunks.push(d));
    res.on("end", () => { JSON.parse(Buffer.concat(chunks).toString("utf8")); resolve(); }); });
  req.on("error", reject); req.end(data); });`;

// The bare loop, for `node -e BARE_LOOP FILE URL CONCURRENCY`: the bodies of FILE (one a line, as the
// fake server records them), sent as they are over a keep-alive agent, each reply parsed and dropped;
// prints its loop's ms. Node's own HTTP client doing the model stage's sending, holding every body.
export const BARE_LOOP = `const http = require("node:http"), fs = require("node:fs");
const [file, url, c] = process.argv.slice(1);
const bodies = fs.readFileSync(file, "utf8").split("\\n").filter(Boolean);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(c) });
${HTTP_POST}
let next = 0;
const t0 = performance.now();
Promise.all(Array.from({ length: Number(c) }, async () => {
  while (next < bodies.length) await post(bodies[next++]); }))
  .then(() => { process.stdout.write(String(performance.now() - t0)); agent.destroy(); });`;
