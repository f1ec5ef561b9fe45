// Secrets in a route: a password in base_url's userinfo is refused before anything is sent or
// written, and its value is never echoed; a header value of any length, echoed back by a gateway, reaches no
// file (cache, results, lock, bundle) and no stream.
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { Project, cleanedAfterEach, expectCleanFailure } from "../support/rig.js";
import { startFake } from "../support/fake.js";

const { servers, projects } = cleanedAfterEach();
afterEach(() => undefined);

/** The files under `dir` (recursively) whose bytes contain `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    if (!existsSync(p)) return;
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
    else if (readFileSync(p).includes(needle)) out.push(p);
  };
  walk(dir);
  return out;
}

describe("secrets in a route never reach a file or a stream", () => {
  it("refuses a password in base_url before any request, and never prints it", async () => {
    const fake = await startFake();
    servers.push(fake);
    const p = new Project();
    projects.push(p);
    const password = "pa55-hunter2-Zr9";
    p.write(
      "routes.yaml",
      `routes:\n  fake:\n    base_url: ${fake.url.replace("http://", `http://medbench:${password}@`)}\n` +
        "    timeout_s: 120\n",
    );
    const r = await p.buildAgainstFake();
    expectCleanFailure(r.stderr);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /routes\.yaml:3:\d+: routes\.fake\.base_url: route fake: base_url .* carries a user name/,
    );
    expect(r.stderr).toMatch(/api_key_env/);
    expect(r.stdout + r.stderr).not.toContain(password);
    expect(fake.stats.requests).toBe(0);
    expect(filesHolding(p.path("cache"), password)).toEqual([]);
    expect(p.exists("medbench.lock") ? p.read("medbench.lock") : "").not.toContain(password);
  });

  it("never prints a query key of a base_url refused for its password", async () => {
    const p = new Project();
    projects.push(p);
    const key = "qk-Secret-7hX2mPq9";
    p.write("routes.yaml", `routes:\n  fake:\n    base_url: http://u:pw-1234@127.0.0.1:9/v1?key=${key}\n`);
    const r = await p.buildAgainstFake();
    expectCleanFailure(r.stderr);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/carries a user name or password/);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain("pw-1234");
  });

  it("never prints the password of a base_url that another check refuses first", async () => {
    const p = new Project();
    projects.push(p);
    const password = "pa55-hunter2-Zr9";
    // An upper-case scheme (the schema's pattern), another route field wrong (the schema), no host.
    for (const url of [
      `HTTPS://medbench:${password}@api.example.org/v1`,
      `https://medbench:${password}@api.example.org/v1\n    concurrency: 0`,
      `http://medbench:${password}@/v1`,
    ]) {
      p.write("routes.yaml", `routes:\n  fake:\n    base_url: ${url}\n`);
      const r = await p.run([
        "build",
        "specs/voice-command.yaml",
        "--model",
        "fake/m",
        "--registry",
        "routes.yaml",
      ]);
      expectCleanFailure(r.stderr);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stdout + r.stderr).not.toContain(password);
    }
  });

  for (const value of ["Zq7x", "k9-Long-Header-Secret-Value"]) {
    it(`redacts a header value of ${value.length} characters that the server echoes back`, async () => {
      const fake = await startFake({ echoHeader: "x-team-token" });
      servers.push(fake);
      const p = new Project();
      projects.push(p);
      p.write(
        "routes.yaml",
        `routes:\n  fake:\n    base_url: ${fake.url}\n    timeout_s: 120\n` +
          `    headers: { X-Team-Token: "${value}" }\n` +
          "    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n",
      );
      const r = await p.buildAgainstFake();
      expect(r.exitCode, r.stderr).toBe(0);
      // The server did receive the header (and echoed it into every reply).
      expect(fake.stats.requests).toBeGreaterThan(0);
      const results = "results/kor-surgical-robot-voice-command/fake_test-model";
      const replies = readdirSync(p.path(results))
        .map((f) => p.read(`${results}/${f}`))
        .join("\n");
      expect(replies).toContain("echo [redacted]");
      expect((await p.run(["export", results, "-o", "bundle.tar.gz"])).exitCode, "export").toBe(0);
      await execa("tar", ["xzf", "bundle.tar.gz", "-C", p.path("results")], { cwd: p.dir });
      expect(r.stdout + r.stderr).not.toContain(value);
      for (const d of ["cache", "results"]) expect(filesHolding(p.path(d), value)).toEqual([]);
      expect(p.read("medbench.lock")).not.toContain(value);
    });
  }
});

describe("a password in a download's base_url", () => {
  it("is refused at the spec's line before anything is fetched or written, and never printed", async () => {
    const p = new Project();
    projects.push(p);
    const password = "pa55-hunter2-Zr9";
    p.edit("specs/voice-command.yaml", (t) =>
      t.replace(/^(\s*)sample:/m, `$1base_url: https://alice:${password}@127.0.0.1:9/release/\n$&`),
    );
    for (const args of [["build"], ["build", "--json"], ["status"]]) {
      const r = await p.run([args[0]!, "specs/voice-command.yaml", ...args.slice(1)]);
      expect(r.exitCode, r.stderr).toBe(2);
      expectCleanFailure(r.stderr);
      expect(r.stderr).toMatch(/voice-command\.yaml:\d+:\d+: stages\.download\.params\.base_url: base_url/);
      expect(r.stderr).toContain("https://[redacted]@127.0.0.1:9/release/ carries a user name or password");
      expect(r.stderr).toMatch(/--data-dir DIR/);
      expect(r.stdout + r.stderr).not.toContain(password);
    }
    expect(filesHolding(p.path("cache"), password)).toEqual([]);
    expect(p.exists("medbench.lock")).toBe(false);
    expect(p.exists("results")).toBe(false);
  });
});
