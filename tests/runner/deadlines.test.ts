// What stops answering costs at most its deadline: a shared remote that accepts connections and
// never answers degrades to the local cache with one warning; a model route whose requests stall stops with
// a message; a build with failed requests exits 1, and `--frozen` refuses it before sending anything.
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server, type Socket } from "node:net";
import { Project, cleanedAfterEach, expectCleanFailure } from "../support/rig.js";
import { startFake } from "../support/fake.js";
import { VOICE_SAMPLE_ITEMS } from "../support/helpers.js";

const { servers, projects } = cleanedAfterEach();

/** A TCP server on 127.0.0.1 that accepts every connection and never says a word. */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => undefined);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
const silent: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  while (silent.length) await silent.pop()!.close();
});

const remoteEnv = (endpoint: string) => ({
  MEDBENCH_REMOTE: "s3://medbench/team",
  MEDBENCH_REMOTE_ENDPOINT: endpoint,
  AWS_ACCESS_KEY_ID: "S3RVER",
  AWS_SECRET_ACCESS_KEY: "S3RVER",
  AWS_REGION: "us-east-1",
  AWS_EC2_METADATA_DISABLED: "true",
  MEDBENCH_REMOTE_TIMEOUT_S: "1", // the deadline, kept small for the test
});

describe("a remote that never answers", () => {
  it("costs build and cache status their deadline; the local cache goes on with one warning", async () => {
    const s3 = await silentServer();
    silent.push(s3);
    const p = new Project();
    projects.push(p);
    const env = remoteEnv(s3.url);
    const r = await p.run(["build", "specs/voice-command.yaml"], env);
    expectCleanFailure(r.stderr);
    expect(r.exitCode, r.stderr).toBe(0);
    const warnings = r.stderr.match(/remote cache s3:\/\/medbench\/team failed/g) ?? [];
    expect(warnings, r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(/continuing with the local cache only/);
    expect(p.exists("results/kor-surgical-robot-voice-command/medbench_prior/metrics.json")).toBe(true);

    const st = await p.run(["cache", "status", "--json"], env);
    expect(st.exitCode, st.stderr).toBe(0);
    const remote = (JSON.parse(st.stdout) as { remote: { reachable: boolean; error: string } }).remote;
    expect(remote.reachable).toBe(false);
  });

  it("refuses a deadline that is not a number of seconds", async () => {
    const p = new Project();
    projects.push(p);
    const r = await p.run(["build", "specs/voice-command.yaml"], {
      ...remoteEnv("http://127.0.0.1:9"),
      MEDBENCH_REMOTE_TIMEOUT_S: "soon",
    });
    expectCleanFailure(r.stderr);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/\$MEDBENCH_REMOTE_TIMEOUT_S: "soon" is not a number of seconds/);
  });
});

const route = (url: string, extra = "", concurrency = 4, timeoutS = 0.5) => `routes:
  fake:
    base_url: ${url}
    concurrency: ${concurrency}
    timeout_s: ${timeoutS}
    retry: { max_attempts: 1, base_ms: 1, max_ms: 5, max_total_s: ${timeoutS} }
${extra}    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`;

describe("a model route that stalls or fails", () => {
  it("stops a route where a third of the requests hang, and says so", async () => {
    // Every third request hangs (past any try's deadline), every time it is sent; the rest answer.
    const fake = await startFake({ faults: { hang: 3 }, faultAttempts: 1_000_000, hangMs: 600_000 });
    servers.push(fake);
    const p = new Project();
    projects.push(p);
    // One request at a time, so that an answer always comes between two hangs and the route is seen to
    // stall, never to fail 4 in a row; a deadline of seconds, so that a loaded machine does not time out the
    // answers.
    p.write("routes.yaml", route(fake.url, "    max_failures_in_a_row: 4\n", 1, 5));
    const r = await p.buildAgainstFake();
    expectCleanFailure(r.stderr);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/the route stalls: \d+ of \d+ requests got no answer within their deadline/);
    expect(r.stderr).toMatch(new RegExp(`stopped after \\d+ of ${VOICE_SAMPLE_ITEMS} requests`));
    // Stopped early: not every request was sent.
    expect(fake.stats.requests).toBeLessThan(VOICE_SAMPLE_ITEMS);
  });

  it("exits 1 when requests failed, and --frozen refuses before sending any", async () => {
    // A third of the requests fail every time (HTTP 500); the route does not stop for them.
    const fake = await startFake({ faults: { 500: 3 }, faultAttempts: 1_000_000 });
    servers.push(fake);
    const p = new Project();
    projects.push(p);
    // No request hangs here: a deadline no loaded machine reaches, so only the 500s fail.
    p.write("routes.yaml", route(fake.url, "    max_failures_in_a_row: 1000\n", 4, 120));
    const r = await p.buildAgainstFake();
    expectCleanFailure(r.stderr);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`the build is incomplete: stage model: \\d+ of ${VOICE_SAMPLE_ITEMS} requests failed`),
    );
    expect(r.stderr).toMatch(/rerun the build to retry the failed requests/);
    const summary = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
      stages: { name: string; incomplete?: string }[];
    };
    expect(summary.stages.find((s) => s.name === "model")?.incomplete).toMatch(/requests failed/);
    const metrics = JSON.parse(
      p.read("results/kor-surgical-robot-voice-command/fake_test-model/metrics.json"),
    ) as { incomplete: boolean };
    expect(metrics.incomplete).toBe(true);

    const sent = fake.stats.requests;
    const before = p.snapshot();
    const frozen = await p.buildAgainstFake(["--frozen"]);
    expectCleanFailure(frozen.stderr);
    expect(frozen.exitCode, frozen.stderr).toBe(1);
    const failed = `\\(\\d+ of ${VOICE_SAMPLE_ITEMS} requests failed\\)`;
    expect(frozen.stderr).toMatch(new RegExp(`its last run was incomplete ${failed}, and --frozen`));
    expect(fake.stats.requests).toBe(sent); // nothing sent
    expect(p.snapshot()).toBe(before);
  });
});
