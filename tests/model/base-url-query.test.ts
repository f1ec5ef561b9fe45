// A key in a base_url's query string (docs/model-requests.md, "Secrets in a route") is treated like a header
// value: sent, yet kept out of the cache's stage records, the exported bundle, stderr and every message, and
// redacted where a server echoes it; the request keys do not depend on it.
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { filesUnder } from "../support/helpers.js";
import { projectAgainstFake, RESULTS, resultRecords } from "../support/fake-build.js";
import { publicUrl, queryValues } from "../../src/model/url-secrets.js";

const cleaned = cleanedAfterEach();
const KEY = "qk-PLANTED-5a4b3c2d1e0f";

function route(url: string, fields = "max_failures_in_a_row: 1000"): string {
  return `routes:
  fake:
    base_url: ${url}
    concurrency: 4
    retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 300 }
    ${fields}
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
`;
}

/** Files holding `secret`: every file of the project but its specs and the registry that holds the key
 *  (the cache, results, lock, a bundle and its contents). */
function leaks(p: Project, secret: string): string[] {
  return filesUnder(p.dir)
    .filter((f) => !f.includes(`${join(p.dir, "specs")}/`) && f !== p.path("routes.yaml"))
    .filter((f) => readFileSync(f).toString("latin1").includes(secret));
}

const requestKeys = (p: Project) =>
  resultRecords<{ request_sha256: string }>(p, "replies.jsonl").map((r) => r.request_sha256);

describe("the query of a base_url", () => {
  it("publicUrl hides every value and keeps a URL without a query as it is", () => {
    expect(publicUrl("http://h:1/v1?key=abc&api-version=2024-02-01#x")).toBe(
      "http://h:1/v1?key=[redacted]&api-version=[redacted]#x",
    );
    expect(publicUrl("https://api.openai.com/v1")).toBe("https://api.openai.com/v1");
    expect(queryValues("http://h/v1?key=a%2Bb&flag&empty=")).toEqual(["a%2Bb", "a+b"]);
  });

  it("is sent, yet reaches no file, bundle or output; an echo of it is redacted", async () => {
    const { fake, p } = await projectAgainstFake(cleaned, { echoUrl: true }, (url) =>
      route(`${url}?key=${KEY}`),
    );
    const outputs: string[] = [];
    const r = await p.buildAgainstFake();
    outputs.push(r.stdout, r.stderr);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.received[0]!.url).toBe(`/v1/chat/completions?key=${KEY}`);
    const reply = JSON.parse(p.read(`${RESULTS}/replies.jsonl`).split("\n")[0]!);
    expect(reply.reasoning_content).toBe("echo /v1/chat/completions?key=[redacted]");
    const args = Project.fakeStatusArgs();
    for (const x of [await p.run(args), await p.run(["export", RESULTS, "-o", "bundle.tar.gz"])])
      outputs.push(x.stdout, x.stderr);
    await execa("mkdir", ["unpacked"], { cwd: p.dir });
    await execa("tar", ["xzf", "bundle.tar.gz", "-C", "unpacked"], { cwd: p.dir });
    expect(p.exists("unpacked/bundle.json")).toBe(true);
    expect(leaks(p, KEY)).toEqual([]);
    for (const o of outputs) expect(o).not.toContain(KEY);
    // The stage records name the route's URL with the value hidden.
    const records = filesUnder(p.path("cache/stages")).map((f) => readFileSync(f, "utf8"));
    expect(records.some((t) => t.includes("?key=[redacted]"))).toBe(true);

    // Another key value: the same requests (keys without the value), all answered from the memo.
    const keys = requestKeys(p);
    const sent = fake.stats.requests;
    p.write("routes.yaml", route(`${fake.url}?key=${KEY}-rotated`));
    const again = await p.buildAgainstFake(["--refresh", "parse"]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent);
    expect(requestKeys(p)).toEqual(keys);
  });

  it("a failing route's messages name its URL with the value hidden", async () => {
    const p = new Project();
    cleaned.projects.push(p);
    p.write("routes.yaml", route(`http://127.0.0.1:9/v1?key=${KEY}`, "max_failures_in_a_row: 2"));
    const r = await p.buildAgainstFake();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("route fake (http://127.0.0.1:9/v1?key=[redacted])");
    expect(r.stderr + r.stdout).not.toContain(KEY);
    expect(leaks(p, KEY)).toEqual([]);
  });

  it("a registry mistake on such a route is refused without quoting the value", async () => {
    const p = new Project();
    cleaned.projects.push(p);
    for (const url of [`ftp://127.0.0.1/v1?key=${KEY}`, `http://?key=${KEY}`]) {
      p.write("routes.yaml", route(url));
      const r = await p.buildAgainstFake();
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/routes\.yaml:3:\d+: .*base_url/);
      expect(r.stderr).toContain("key=[redacted]");
      expect(r.stderr).not.toContain(KEY);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
