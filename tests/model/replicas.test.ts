// A route over several servers (`replicas`): three fake OpenAI-compatible servers on 127.0.0.1, one killed
// halfway through the model stage; every item is answered, the dead server's requests go to the others, and
// the result is byte for byte a one-server build's (the reply key names base_url, not the server).
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startFake, type Fake } from "../support/fake.js";
import { expectCleanFailure, Project } from "../support/rig.js";
import { results, RESULTS } from "../support/remote-rig.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function project(base: Fake, replicas: Fake[]): Project {
  const p = new Project();
  cleanups.push(() => p.remove());
  const listed = replicas.length ? `    replicas: [${replicas.map((fake) => fake.url).join(", ")}]\n` : "";
  p.write(
    "routes.yaml",
    `routes:\n  fake:\n    base_url: ${base.url}\n${listed}    concurrency: 6\n    timeout_s: 30\n` +
      "    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n",
  );
  return p;
}

async function fakes(count: number): Promise<Fake[]> {
  const started = await Promise.all(Array.from({ length: count }, () => startFake({ latencyMs: 40 })));
  for (const fake of started) cleanups.push(() => fake.close());
  return started;
}

/** The servers the reply memo recorded, by how many replies each gave. */
function memoServers(p: Project): Map<string, number> {
  const dir = p.path("cache/memo/requests");
  const counts = new Map<string, number>();
  // A log line: request key, sha256 of the entry, the entry in base64 (src/runner/replies/reply-log.ts).
  for (const name of readdirSync(dir).filter((file) => file.endsWith(".log")))
    for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
      const encoded = line.split(" ")[2];
      if (!encoded) continue;
      const entry = JSON.parse(Buffer.from(encoded, "base64").toString("utf8")) as { server?: string };
      if (entry.server) counts.set(entry.server, (counts.get(entry.server) ?? 0) + 1);
    }
  return counts;
}

describe("a route with replicas", () => {
  it("answers every item when one of three servers dies halfway, as one server would", async () => {
    const [first, second, third] = await fakes(3);
    const p = project(first!, [second!, third!]);
    const build = p.start(Project.fakeBuildArgs());
    const sent = () => first!.stats.requests + second!.stats.requests + third!.stats.requests;
    while (sent() < 40) await new Promise((wake) => setTimeout(wake, 10));
    await second!.close(); // its open connections are cut, its port refuses from now on
    const run = await build;
    expect(run.exitCode, String(run.stderr)).toBe(0);
    const metrics = JSON.parse(p.read(`${RESULTS}/metrics.json`));
    expect(metrics.metrics.api_errors).toBe(0);
    expect(metrics.incomplete).toBe(false);
    // Each server answered some; the memo says which answered each reply.
    const servers = memoServers(p);
    for (const fake of [first!, second!, third!]) expect(servers.get(fake.url) ?? 0).toBeGreaterThan(0);

    const one = project(first!, []); // the same base_url, so the same keys: one server alone
    expect((await one.buildAgainstFake()).exitCode).toBe(0);
    expect(results(p)).toEqual(results(one));
    expect(memoServers(one).size).toBe(0); // a route without replicas records no server
  });

  it("names every server of the route, keys hidden, when all of them fail", async () => {
    const [first] = await fakes(1);
    const p = project(first!, []);
    p.edit("routes.yaml", (text) =>
      text
        .replace(/base_url: .*/, "base_url: http://127.0.0.1:9/v1?key=qk-dead-0a1b2c3d4e")
        .replace(
          "    concurrency",
          "    replicas: [http://127.0.0.1:9/w?key=qk-dead-9f8e7d6c5b]\n    concurrency",
        )
        .replace("timeout_s: 30", "timeout_s: 30\n    max_failures_in_a_row: 2"),
    );
    const run = await p.buildAgainstFake();
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      "route fake (http://127.0.0.1:9/v1?key=[redacted], http://127.0.0.1:9/w?key=[redacted])",
    );
    expect(run.stderr).not.toContain("qk-dead");
  });

  it("refuses a replica that is not an http(s) URL, naming it", async () => {
    const [first] = await fakes(1);
    const p = project(first!, []);
    p.edit("routes.yaml", (text) =>
      text.replace("    concurrency", "    replicas: [ftp://x]\n    concurrency"),
    );
    const run = await p.buildAgainstFake();
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/routes\.yaml:\d+:\d+/);
    expect(run.stderr).toContain("replicas");
    expectCleanFailure(run.stderr);
  });
});

describe("Replicas, the choice of a server", () => {
  it("picks the fewest outstanding, sets a failed one aside a doubling while, takes it back", async () => {
    const { Replicas } = await import("../../src/model/replicas.js");
    let now = 0;
    const replicas = new Replicas(["a", "b", "c"], () => now);
    replicas.begin(0);
    replicas.begin(1);
    expect(replicas.pick()).toBe(2);
    replicas.failed(2); // aside 1 s
    expect(replicas.pick()).toBe(0); // a tie of one each: the first
    expect(replicas.otherAvailable(new Set([2]))).toBe(true);
    now = 999;
    expect(replicas.pick()).not.toBe(2);
    now = 1000;
    replicas.end(0);
    replicas.end(1);
    expect(replicas.pick()).toBe(0);
    replicas.failed(2); // a second failure in a row: aside 2 s
    now = 2999;
    replicas.failed(0);
    replicas.failed(1);
    expect(replicas.otherAvailable(new Set())).toBe(false);
    // All aside: the one whose time ends first (2 at 3,000 ms, 0 and 1 later).
    expect(replicas.pick()).toBe(2);
    replicas.answered(2);
    expect(replicas.otherAvailable(new Set([0, 1]))).toBe(true);
  });
});
