// Every URL of a route is scrubbed of its query's secrets: base_url and each `replicas:` URL, with
// servers that echo the URL they were sent to in their replies and in their error bodies, and a shared
// remote cache on the test S3 server. The secret bytes reach no result, cache object, bundle member,
// remote object or line of output (docs/model-requests.md, "Secrets in a route").
import { afterEach, describe, expect, it } from "vitest";
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { filesUnder } from "../support/helpers.js";
import { cleanUp, clone, RESULTS, remoteEnv, startFake, startS3 } from "../support/remote-rig.js";
import type { Project } from "../support/rig.js";

afterEach(cleanUp);

const KEYS = ["qk-BASE-0f1e2d3c4b5a", "qk-REPLICA1-9a8b7c6d5e4f", "qk-REPLICA2-1a2b3c4d5e6f"];

/** A file's text, and each base64 run in it decoded (the reply memo's logs keep each entry in base64). */
function readable(file: string): string {
  const text = readFileSync(file).toString("latin1");
  const runs = text.match(/[A-Za-z0-9+/]{16,}={0,2}/g) ?? [];
  return [text, ...runs.map((run) => Buffer.from(run, "base64").toString("latin1"))].join("\n");
}

/** The files under `dir` holding any of `secrets` (raw bytes, or percent-encoded as a URL carries it). */
function holding(dir: string, secrets: string[]): string[] {
  const needles = secrets.flatMap((secret) => [secret, encodeURIComponent(secret)]);
  return filesUnder(dir).filter((file) => {
    const text = readable(file);
    return needles.some((needle) => text.includes(needle));
  });
}

/** The project's files but routes.yaml, which holds the keys as written. */
const projectLeaks = (p: Project) =>
  holding(p.dir, KEYS).filter((file) => file !== join(p.dir, "routes.yaml"));

describe("the query keys of a route's replicas", () => {
  it("reach no result, cache object, bundle member, remote object or output, echoed or not", async () => {
    // Each server echoes its URL in every reply, and one body in 5 first meets a 500 quoting it.
    const server = { echoUrl: true, faults: { 500: 5 }, latencyMs: 5 };
    const [s3, ...fakes] = await Promise.all([
      startS3(),
      startFake(server),
      startFake(server),
      startFake(server),
    ]);
    const [base, ...replicas] = fakes.map((fake, i) => `${fake.url}?key=${KEYS[i]}`);
    const p = clone(fakes[0]!);
    p.edit("routes.yaml", (text) =>
      text
        .replace(/base_url: .*/, `base_url: ${base}\n    replicas: [${replicas.join(", ")}]`)
        .replace("timeout_s: 120", "timeout_s: 120\n    retry: { base_ms: 1, max_ms: 5 }"),
    );
    const outputs: string[] = [];
    const build = await p.buildAgainstFake([], remoteEnv(s3));
    outputs.push(build.stdout, build.stderr);
    expect(build.exitCode, build.stderr).toBe(0);
    // Every server was asked and sent its 500s and echoes, each with its own key.
    for (const [i, fake] of fakes.entries()) {
      expect(fake.stats.received.some((r) => r.url.endsWith(`?key=${KEYS[i]}`))).toBe(true);
      expect(fake.stats.faults["500"] ?? 0).toBeGreaterThan(0);
    }
    const replies = p.read(`${RESULTS}/replies.jsonl`);
    expect(replies).toContain("echo /v1/chat/completions?key=[redacted]");
    const exported = await p.run(["export", RESULTS, "-o", "bundle.tar.gz"]);
    outputs.push(exported.stdout, exported.stderr);
    expect(exported.exitCode, exported.stderr).toBe(0);
    await execa("mkdir", ["unpacked"], { cwd: p.dir });
    await execa("tar", ["xzf", "bundle.tar.gz", "-C", "unpacked"], { cwd: p.dir });
    expect(p.exists("unpacked/bundle.json")).toBe(true);

    expect(projectLeaks(p)).toEqual([]);
    expect(holding(s3.dir, KEYS)).toEqual([]);
    expect(filesUnder(s3.dir).length).toBeGreaterThan(0);
    for (const output of outputs) for (const key of KEYS) expect(output).not.toContain(key);
  });
});
