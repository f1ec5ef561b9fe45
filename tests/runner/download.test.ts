// Downloads through a real HTTP server on 127.0.0.1, and releases read from --data-dir.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { createHash } from "node:crypto";
import { cpSync, readdirSync, existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { Project } from "../support/rig.js";

const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

describe("download over HTTP", () => {
  const files: Record<string, string> = {
    "notes/a b&c (1).txt": "first file, with a name to encode\n",
    "x.txt": "second\n",
  };
  let server: Server;
  let base = "";
  const hits: string[] = [];
  let mode: "ok" | "tampered" | "cut" = "ok";
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url!, "http://x").pathname.replace(/^\/release\//, ""));
      hits.push(path);
      const body = files[path];
      if (body === undefined) {
        res.writeHead(404).end("no");
        return;
      }
      if (mode === "tampered") {
        res.writeHead(200).end(body + "tampered");
        return;
      }
      if (mode === "cut") {
        res.writeHead(200, { "content-length": String(body.length * 10) });
        res.write(body);
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.writeHead(200).end(body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/release/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const spec = (pins: Record<string, string | null>) => `slug: http-test
version: 0
task: voice-command
spec: { dataset: http-test }
stages:
  download:
    kind: download
    params:
      source: test/http
      base_url: ${base}
      files:
${Object.entries(pins)
  .map(([k, v]) => `        "${k}": ${v ?? "null"}`)
  .join("\n")}
`;
  const pinned = () => Object.fromEntries(Object.entries(files).map(([k, v]) => [k, sha(v)]));
  const objects = (p: Project) =>
    existsSync(p.path("cache/objects"))
      ? readdirSync(p.path("cache/objects"), { recursive: true }).filter((f) => String(f).length > 3).length
      : 0;

  it("a release the network cannot reach names the URL, the cause and --data-dir", async () => {
    // A port nothing listens on any more: the connection is refused, as offline it cannot be made.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const p = new Project(false);
    const url = `http://127.0.0.1:${port}/release/`;
    p.write("spec.yaml", spec(pinned()).replace(base, url));
    const r = await p.run(["build", "spec.yaml"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`GET ${url}`);
    expect(r.stderr).toContain(": the network is unreachable (ECONNREFUSED)");
    expect(r.stderr).toContain("pass --data-dir DIR");
    expect(r.stderr).not.toMatch(/^error: .*fetch failed$/m);
    p.remove();
  });

  it("fetches each file by its URL-encoded name, checks the pins, and never fetches again", async () => {
    const p = new Project(false);
    p.write("spec.yaml", spec(pinned()));
    hits.length = 0;
    mode = "ok";
    const r = await p.run(["build", "spec.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(hits.sort()).toEqual(Object.keys(files).sort());
    hits.length = 0;
    const again = await p.run(["build", "spec.yaml", "--json"]);
    expect(JSON.parse(again.stdout.trim()).stages[0].status).toBe("fresh");
    expect(hits).toEqual([]);
    p.remove();
  });

  /** A build against the server in a failing mode: exit 1, and nothing kept in the cache. */
  async function refusedBuild(serving: typeof mode) {
    const p = new Project(false);
    p.write("spec.yaml", spec(pinned()));
    mode = serving;
    const r = await p.run(["build", "spec.yaml"]);
    mode = "ok";
    expect(r.exitCode).toBe(1);
    expect(objects(p)).toBe(0);
    expect(readdirSync(p.path("cache/tmp"))).toEqual([]);
    return { p, r };
  }

  it("refuses a file whose hash differs from its pin, keeping nothing", async () => {
    const { p, r } = await refusedBuild("tampered");
    expect(r.stderr).toMatch(/sha256 mismatch\n\s+expected [0-9a-f]{64}\n\s+actual\s+[0-9a-f]{64}/);
    expect(p.exists("medbench.lock")).toBe(false);
    p.remove();
  });

  it("leaves nothing half-written when the connection drops", async () => {
    const { p } = await refusedBuild("cut");
    p.remove();
  });

  it("trusts an unpinned file on first use and records it", async () => {
    const p = new Project(false);
    p.write("spec.yaml", spec({ "x.txt": null }));
    const r = await p.run(["build", "spec.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/x\.txt: no published pin; trusted on first use/);
    expect(JSON.parse(p.read("medbench.lock")).specs["spec.yaml"].pins["test/http"]["x.txt"]).toBe(
      sha(files["x.txt"]!),
    );
    p.remove();
  });
});

describe("--data-dir", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project();
    cpSync(p.path("specs/voice-command/sample"), p.path("release"), { recursive: true });
  });
  afterAll(() => p.remove());

  it("reads a downloaded release, trusting files without a published pin on first use", async () => {
    const r = await p.run(["build", "specs/voice-command.yaml", "--data-dir", "release"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr.match(/trusted on first use/g)?.length).toBe(7);
    const pins = JSON.parse(p.read("medbench.lock")).specs["specs/voice-command.yaml"].pins[
      "khdp/kor-surgical-robot-voice-command"
    ];
    expect(pins["benchmark/rules_v0.1.txt"]).toBe(sha(p.read("release/benchmark/rules_v0.1.txt")));
    const again = await p.run(["build", "specs/voice-command.yaml", "--data-dir", "release"]);
    expect(again.stderr).not.toMatch(/trusted on first use/);
  });

  it("refuses a file that changed since, unless asked explicitly", async () => {
    p.edit("release/benchmark/rules_v0.1.txt", (t) => t + "14. 바뀐 규칙.\n");
    const lock = p.read("medbench.lock");
    const r = await p.run(["build", "specs/voice-command.yaml", "--data-dir", "release"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/rules_v0\.1\.txt changed since it was trusted on first use/);
    expect(r.stderr).toMatch(/--trust-changed/);
    expect(p.read("medbench.lock")).toBe(lock);
    const ok = await p.run([
      "build",
      "specs/voice-command.yaml",
      "--data-dir",
      "release",
      "--trust-changed",
    ]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/changed and accepted with --trust-changed/);
  });

  it("also takes MEDBENCH_DATA_DIR", async () => {
    const r = await p.run(["build", "specs/voice-command.yaml", "--json"], {
      MEDBENCH_DATA_DIR: p.path("release"),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!).stages[0].status).toBe("fresh");
  });
});

describe("the note-errors spec", () => {
  it("carries the published pins and refuses a release that does not match them", async () => {
    const p = new Project();
    const spec = p.read("specs/note-errors.yaml");
    expect(spec).toContain(
      "synthetic_snuh.duckdb: fd2056b31cc74c171c3906a7e48482979b993d7a52471dbe5ddd3f3df21a87c8",
    );
    expect(spec).toContain(
      "pairs_test.jsonl: a297aa3978f3a16f2df832cb676b2149ec44365f4287b1d1f8edd67b7c00e064",
    );
    expect(spec).toContain(
      "pairs_train.jsonl: 6044d84bc35215a24c7939c6c5b0a8366c0971bbce7e15f441380d9104cd79ad",
    );
    // Without --data-dir the bundled synthetic sample is built (tests/tasks/note-errors-build.test.ts).
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(p.path("data"));
    for (const f of ["synthetic_snuh.duckdb", "pairs_test.jsonl", "pairs_train.jsonl"])
      writeFileSync(p.path("data", f), "not the release\n");
    const wrong = await p.run(["build", "specs/note-errors.yaml", "--data-dir", "data"]);
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(/pairs_test\.jsonl: sha256 mismatch\n\s+expected a297aa39/);
    p.remove();
  });
});
