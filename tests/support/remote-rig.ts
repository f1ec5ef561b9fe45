// The pieces of the remote-cache tests: an S3-compatible server (s3rver, in its own process so that a test
// can kill it), the fake OpenAI-compatible server, project clones with their own local caches, all on
// 127.0.0.1 port 0 and removed after each test (call `cleanUp` from afterEach).
import { execa, type ResultPromise } from "execa";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { Project } from "./rig.js";
import { REPO } from "./helpers.js";
import { startFake as startTheFake, type Fake } from "./fake.js";

export type { Fake };

export type S3 = {
  endpoint: string;
  dir: string;
  child: ResultPromise;
  /** GETs of keys holding `match`: `allow` more are answered, the rest wait for `go`
   *  (scripts/s3-server.mjs);
   *  `miss`: those then find nothing, whatever was written meanwhile. */
  stall(match: string, allow: number, miss?: "miss"): Promise<void>;
  go(): Promise<void>;
  /** The next `method` request of a key holding `match` is carried out when it comes (a GET reads what is
   *  there then) and answered only at `go`; `lateAnswers` says how many such answers wait. */
  late(method: string, match: string): Promise<void>;
  lateAnswers(): Promise<number>;
  /** One request in N answered 503 SlowDown (0: none), and every request `delay` ms late. */
  throttle(every: number): Promise<void>;
  /** How many requests it answered 503 SlowDown so far. */
  throttled(): Promise<number>;
  delay(ms: number): Promise<void>;
  /** Every `method` request of a key holding `match` (and, given `writer`, carrying that machine's
   *  x-amz-meta-medbench-writer) answered `status` (503: SlowDown); `refuseNone` ends them. */
  refuse(method: string, match: string, status: number, writer?: string): Promise<void>;
  refuseNone(): Promise<void>;
  /** How many requests it refused so far. */
  refused(): Promise<number>;
};

const cleanups: (() => Promise<void> | void)[] = [];
export async function cleanUp(): Promise<void> {
  while (cleanups.length) await cleanups.pop()!();
}

/** `args`: the server's own options (e.g. --no-conditional-writes). */
export async function startS3(args: string[] = []): Promise<S3> {
  const dir = mkdtempSync(join(tmpdir(), "medbench-s3-"));
  const child = execa("node", [resolve(REPO, "scripts/s3-server.mjs"), "--dir", dir, ...args], {
    reject: false,
    stdin: "pipe",
  });
  // Its stdout: the JSON line once it listens, then one line per command it has carried out.
  const acks: ((line: string) => void)[] = [];
  let out = "";
  let ready: (line: string) => void = () => undefined;
  const line = new Promise<string>((ok, fail) => {
    ready = ok;
    void child.then((r) => fail(new Error(`s3 server exited: ${String(r.stderr)}`)));
  });
  let first = true;
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    for (let i = out.indexOf("\n"); i >= 0; i = out.indexOf("\n")) {
      const text = out.slice(0, i);
      out = out.slice(i + 1);
      if (first) ready(text);
      else acks.shift()?.(text);
      first = false;
    }
  });
  const command = (text: string) =>
    new Promise<string>((ok) => {
      acks.push(ok);
      child.stdin!.write(`${text}\n`);
    });
  cleanups.push(() => {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    endpoint: (JSON.parse(await line) as { endpoint: string }).endpoint,
    dir,
    child,
    stall: async (match, allow, miss) =>
      void (await command(`stall ${match} ${allow}${miss ? " miss" : ""}`)),
    go: async () => void (await command("go")),
    late: async (method, match) => void (await command(`late ${method} ${match}`)),
    lateAnswers: async () => Number(await command("late?")),
    throttle: async (every) => void (await command(`throttle ${every}`)),
    throttled: async () => Number(await command("throttled")),
    delay: async (ms) => void (await command(`delay ${ms}`)),
    refuse: async (method, match, status, writer) =>
      void (await command(`refuse ${method} ${match} ${status}${writer ? ` ${writer}` : ""}`)),
    refuseNone: async () => void (await command("refuse off")),
    refused: async () => Number(await command("refused")),
  };
}

export async function startFake(opts: Record<string, unknown> = {}): Promise<Fake> {
  const fake = await startTheFake(opts);
  cleanups.push(() => fake.close());
  return fake;
}

/** A project with the route `fake` to the fake server; each clone has its own local cache. */
export function clone(fake: Fake): Project {
  const p = new Project();
  cleanups.push(() => p.remove());
  p.write(
    "routes.yaml",
    `routes:
  fake:
    base_url: ${fake.url}
    concurrency: 4
    timeout_s: 120
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`,
  );
  return p;
}

export const PREFIX = "team/medbench";
export const remoteEnv = (s3: S3) => ({
  MEDBENCH_REMOTE: `s3://medbench/${PREFIX}`,
  MEDBENCH_REMOTE_ENDPOINT: s3.endpoint,
  AWS_ACCESS_KEY_ID: "S3RVER",
  AWS_SECRET_ACCESS_KEY: "S3RVER",
  AWS_REGION: "us-east-1",
});

export const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";

/** Every file of a results folder, by relative path. */
export function results(p: Pick<Project, "path">, dir = RESULTS): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const f = join(d, n);
      if (statSync(f).isDirectory()) walk(f);
      else out[relative(p.path(dir), f)] = readFileSync(f, "utf8");
    }
  };
  walk(p.path(dir));
  return out;
}

// A remote whose median call is slow is the wall clock's word, not a fault: a loaded 2-core run makes the
// local S3 server slow. Only that sentence is left out; a throttled or skipped call still counts.
const ONLY_SLOW = /was the bottleneck of this build: its median call took [\d.]+ s over \d+ calls; check/;

/** Every warning of a --json build's event stream. */
export function everyWarning(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type: string; message?: string })
    .filter((e) => e.type === "warning")
    .map((e) => e.message ?? "");
}

/** The warnings of a --json build's event stream, but for the remote's slow-median sentence. */
export const warnings = (stderr: string) => everyWarning(stderr).filter((line) => !ONLY_SLOW.test(line));

/** The file s3rver keeps a remote object in. */
export const remoteObject = (s3: S3, key: string) =>
  join(s3.dir, "medbench", PREFIX, `${key}._S3rver_object`);
