// Faults that must lose nothing and leak nothing, against the fake OpenAI-compatible server over real HTTP:
// a failed request is never an answer and the next build sends exactly the failed ones; `choices: []` is an
// API error; a dead server stops the stage; a key echoed by a 401 reaches no file and no output.
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { filesUnder, VOICE_SAMPLE_ITEMS } from "../support/helpers.js";
import { startFake, type Fake } from "../support/fake.js";

const { servers, projects } = cleanedAfterEach();

const RESULTS = "results/kor-surgical-robot-voice-command/fake_test-model";
const N = VOICE_SAMPLE_ITEMS; // requests of the voice-command sample

/** A registry with tiny budgets: a request gives up within a second or two, never after minutes. */
function registry(url: string, fields: string): string {
  return `routes:
  fake:
    base_url: ${url}
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
${fields
  .trim()
  .split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
`;
}
const QUICK = `concurrency: 4
timeout_s: 120
retry: { max_attempts: 3, base_ms: 1, max_ms: 5, max_total_s: 300 }
max_failures_in_a_row: 1000`;

async function setup(server: Record<string, unknown>, fields = QUICK) {
  const fake: Fake = await startFake(server);
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write("routes.yaml", registry(fake.url, fields));
  return { fake, p };
}

const build = (p: Project, env: Record<string, string> = {}) => p.buildAgainstFake([], env);
const statusOf = (stdout: string, stage: string) =>
  JSON.parse(stdout.trim().split("\n").pop()!).stages.find((s: { name: string }) => s.name === stage).status;
const metrics = (p: Project) => JSON.parse(p.read(`${RESULTS}/metrics.json`));
const replies = (p: Project) =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; error: string | null; text: string; request_sha256: string });
/** The distinct requests of the items that failed (an utterance in two subsets is one request). */
const failedRequests = (p: Project) =>
  new Set(replies(p).flatMap((r) => (r.error !== null ? [r.request_sha256] : [])));

/** Bodies the server never answered (each sent at least once). */
const unanswered = (fake: Fake) => [...fake.stats.bodies.keys()].filter((k) => !fake.stats.answered.has(k));

/** What one more build sends: the bodies whose count went up, and by how much. */
function sentSince(fake: Fake, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, n] of fake.stats.bodies) if (n > (before.get(k) ?? 0)) out.set(k, n - (before.get(k) ?? 0));
  return out;
}

describe("a failed request is not an answer (14.1)", () => {
  it("a third of the requests failing, then a healthy server: the next build sends just those", async () => {
    const { fake, p } = await setup({ faults: { 503: 3 }, faultAttempts: 99 });
    const first = await build(p);
    expect(first.exitCode, first.stderr).toBe(1); // incomplete: some requests failed
    expect(first.stderr).toMatch(/requests failed .*the next build sends them again/);
    // --json: the result says so itself (complete: false beside exit 1), as verify's ok does.
    expect(JSON.parse(first.stdout.trim().split("\n").at(-1)!)).toMatchObject({ complete: false });
    const failed = unanswered(fake);
    expect(failed.length).toBeGreaterThan(N / 5);
    expect(failedRequests(p).size).toBe(failed.length);
    expect(metrics(p).metrics.api_errors).toBe(replies(p).filter((r) => r.error !== null).length);
    expect(metrics(p).incomplete).toBe(true);
    // `status` says why the model stage will run again.
    const status = await p.run(Project.fakeStatusArgs());
    expect(status.stdout + status.stderr).toMatch(/incomplete/);

    fake.set({ faults: {} });
    const before = new Map(fake.stats.bodies);
    const second = await build(p);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(statusOf(second.stdout, "model")).toBe("ran");
    const sent = sentSince(fake, before);
    expect([...sent.keys()].sort()).toEqual([...failed].sort()); // exactly the failed ones
    expect([...sent.values()].every((n) => n === 1)).toBe(true); // each once
    expect(metrics(p).metrics.api_errors).toBe(0);
    expect(metrics(p).incomplete).toBe(false);

    const requests = fake.stats.requests;
    const third = await build(p);
    expect(third.exitCode, third.stderr).toBe(0);
    expect(statusOf(third.stdout, "model")).toBe("fresh");
    expect(fake.stats.requests).toBe(requests);
  });

  it("503s beyond the retry budget leave the run incomplete, however few items they hit", async () => {
    const { fake, p } = await setup({ faults: { 503: 40 }, faultAttempts: 99 });
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: some requests failed
    const errors = metrics(p).metrics.api_errors;
    expect(failedRequests(p).size).toBe(unanswered(fake).length);
    expect(errors).toBeGreaterThan(0);
    expect(errors / N).toBeLessThan(0.1);
    expect(metrics(p).incomplete).toBe(true);
  });

  it("waits for no Retry-After past the request's deadline: a failure, sent again next build", async () => {
    const { fake, p } = await setup({ faults: { 429: 10 }, retryAfter: 3600 });
    const first = await build(p);
    expect(first.exitCode, first.stderr).toBe(1); // incomplete: some requests failed
    const failed = replies(p).filter((r) => r.error !== null);
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed)
      expect(r.error).toMatch(/HTTP 429 asking to wait 3600 s, beyond the request's deadline/);
    expect(metrics(p).incomplete).toBe(true);
    // The server limits only each body's first attempt: the next build gets every reply.
    const before = new Map(fake.stats.bodies);
    const second = await build(p);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(sentSince(fake, before).size).toBe(new Set(failed.map((r) => r.request_sha256)).size);
    expect(metrics(p).metrics.api_errors).toBe(0);
  });
});

describe("a malformed success (14.2)", () => {
  it("retries `choices: []` and keeps the retry's reply", async () => {
    const { fake, p } = await setup({ faults: { empty: 5 } });
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults.empty).toBeGreaterThan(0);
    // Every body that got an empty list was sent again and answered.
    expect(unanswered(fake)).toEqual([]);
    expect(metrics(p).metrics.api_errors).toBe(0);
    expect(replies(p).every((x) => x.text.length > 0)).toBe(true);
  });

  it("records `choices: []` as an API error, not an empty reply, and resends it next build", async () => {
    const { fake, p } = await setup({ faults: { empty: 5 }, faultAttempts: 99 });
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: some requests failed
    const failed = replies(p).filter((x) => x.error !== null);
    const failedKeys = failedRequests(p);
    expect(failedKeys.size).toBe(unanswered(fake).length);
    expect(failed.length).toBeGreaterThan(0);
    for (const x of failed) expect(x.error).toBe("malformed response body (choices is empty)");
    expect(replies(p).filter((x) => x.error === null && x.text === "")).toEqual([]);
    expect(metrics(p).metrics.api_errors).toBe(failed.length);
    fake.set({ faults: {} });
    const before = new Map(fake.stats.bodies);
    expect((await build(p)).exitCode).toBe(0);
    expect(sentSince(fake, before).size).toBe(failedKeys.size);
    expect(metrics(p).metrics.api_errors).toBe(0);
  });
});

/** Every file under a folder, for grepping by hand (binary included: a secret may sit in a gzip-less
 *  blob). */
describe("a key echoed by a 401 (14.7)", () => {
  it("reaches no file, bundle or output, and the 401 is never cached", async () => {
    const KEY = "sk-medbench-test-PLANTED-9f8e7d6c5b4a39281706";
    const OTHER = "sk-gw-0a1b2c3d4e5f6a7b8c9d0e1f"; // token-shaped, in the body, not configured anywhere
    const { fake, p } = await setup(
      { faults: { auth: 6 }, faultAttempts: 99 },
      `api_key_env: FAKE_API_KEY\n${QUICK}`,
    );
    const env = { FAKE_API_KEY: KEY };
    const outputs: string[] = [];
    const r = await build(p, env);
    outputs.push(r.stdout, r.stderr);
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: some requests failed
    expect(fake.stats.faults.auth).toBeGreaterThan(0);
    const refused = replies(p).filter((x) => x.error !== null);
    const refusedKeys = failedRequests(p);
    expect(refusedKeys.size).toBe(fake.stats.faults.auth);
    for (const x of refused) {
      expect(x.error).toMatch(/^HTTP 401: .*Incorrect API key provided: Bearer \[redacted\]/);
      expect(x.error).not.toContain("sk-gw-");
    }
    for (const args of [
      ["status", "specs/voice-command.yaml", "--model", "fake/test-model", "--registry", "routes.yaml"],
      ["export", RESULTS, "-o", "bundle.tar.gz"],
    ]) {
      const x = await p.run(args, env);
      outputs.push(x.stdout, x.stderr);
    }
    expect(p.exists("bundle.tar.gz")).toBe(true);
    await execa("mkdir", ["unpacked"], { cwd: p.dir });
    await execa("tar", ["xzf", "bundle.tar.gz", "-C", "unpacked"], { cwd: p.dir });
    // Every file of the project (cache, memo logs, results, lock, the bundle and its contents) and every
    // output.
    const files = filesUnder(p.dir).filter((f) => !f.includes(`${join(p.dir, "specs")}/`));
    expect(files.some((f) => f.includes("/memo/"))).toBe(true);
    for (const f of files) {
      const text = readFileSync(f).toString("latin1");
      expect(text.includes(KEY), f).toBe(false);
      expect(text.includes(OTHER), f).toBe(false);
    }
    for (const o of outputs) {
      expect(o).not.toContain(KEY);
      expect(o).not.toContain(OTHER);
    }

    // Never cached: once the key is accepted, the next build sends exactly the refused requests.
    fake.set({ faults: {} });
    const before = new Map(fake.stats.bodies);
    const again = await build(p, env);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(sentSince(fake, before).size).toBe(refusedKeys.size);
    expect(metrics(p).metrics.api_errors).toBe(0);
  });
});

describe("a dead server (14.3)", () => {
  /** A route's budgets against a dead server: two requests at a time, quick retries, the fields given. */
  const dead = (budgets: {
    timeout_s: number;
    max_attempts: number;
    max_total_s: number;
    max_failures_in_a_row: number;
  }) => `concurrency: 2
timeout_s: ${budgets.timeout_s}
retry: { max_attempts: ${budgets.max_attempts}, base_ms: 1, max_ms: 5, max_total_s: ${budgets.max_total_s} }
max_failures_in_a_row: ${budgets.max_failures_in_a_row}`;
  it("gives each request one deadline, tries included; stops the stage at N failures in a row", async () => {
    // A try may take 60 s, but the request's deadline is under a second: without it this test times out.
    const { fake, p } = await setup(
      { deadAfter: 0 },
      dead({ timeout_s: 60, max_attempts: 3, max_total_s: 0.5, max_failures_in_a_row: 3 }),
    );
    const r = await build(p);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/route fake \(http:\/\/127\.0\.0\.1:\d+\/v1\): 3 requests in a row failed/);
    expect(r.stderr).toMatch(/timeout after/);
    expect(r.stderr).toMatch(/requests not sent are not errors/);
    expect(r.stderr).toMatch(/build again: it sends only the requests without a reply/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // The stage stopped: three requests failed, and at most the ones in flight were started besides.
    expect(fake.stats.bodies.size).toBeLessThanOrEqual(3 + 2);
    expect(p.exists(RESULTS)).toBe(false);
  });

  it("continues where the stopped build left off, sending only what had no reply", async () => {
    // The 20 answered requests must each reach the client within its deadline, even on a loaded machine
    // (one that times out would be re-sent by the second build): a deadline of seconds, not one, and one
    // try, so that the two dead requests in a row cost one deadline.
    const { fake, p } = await setup(
      { deadAfter: 20 },
      dead({ timeout_s: 15, max_attempts: 1, max_total_s: 15, max_failures_in_a_row: 2 }),
    );
    const first = await build(p);
    expect(first.exitCode).toBe(1);
    expect(first.stderr).toMatch(/2 requests in a row failed/);
    const answered = new Set(fake.stats.answered);
    expect(answered.size).toBe(20);

    fake.set({ deadAfter: null });
    // Generous budgets now (not part of any key): a loaded machine must not make a healthy server fail.
    p.write("routes.yaml", registry(fake.url, QUICK));
    const before = new Map(fake.stats.bodies);
    const second = await build(p);
    expect(second.exitCode, second.stderr).toBe(0);
    const sent = sentSince(fake, before);
    for (const k of answered) expect(sent.has(k)).toBe(false);
    expect(sent.size + answered.size).toBe(fake.stats.bodies.size);
    expect(metrics(p).metrics.api_errors).toBe(0);
    expect(metrics(p).incomplete).toBe(false);
  });
});
