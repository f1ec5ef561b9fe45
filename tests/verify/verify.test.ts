// A result exported here verifies elsewhere from the bundle alone; tampering is caught by name; --live
// reports exactly the verdicts a rerun changes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { execa } from "execa";
import { Project } from "../support/rig.js";
import { startFake } from "../support/fake.js";

const RESULT = "results/kor-surgical-robot-voice-command/medbench_prior";

describe("export and verify", () => {
  let p: Project;
  let elsewhere: Project;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    const r = await p.run(["export", RESULT, "-o", "bundle.tar.gz"]);
    expect(r.exitCode, r.stderr).toBe(0);
    elsewhere = new Project(false); // another directory: no specs, no cache, no lock
  });
  afterAll(() => {
    p.remove();
    elsewhere.remove();
  });

  const unpack = async (name: string) => {
    mkdirSync(elsewhere.path(name), { recursive: true });
    await execa("tar", ["xzf", p.path("bundle.tar.gz"), "-C", elsewhere.path(name)]);
    return name;
  };
  const verify = (what: string, ...args: string[]) => elsewhere.run(["verify", what, "--json", ...args]);

  it("packs the same result to the same bytes, with no secret and no data", async () => {
    const again = await p.run(["export", RESULT, "-o", "bundle2.tar.gz"]);
    expect(again.exitCode).toBe(0);
    expect(readFileSync(p.path("bundle2.tar.gz")).equals(readFileSync(p.path("bundle.tar.gz")))).toBe(true);
    const list = (await execa("tar", ["tzf", p.path("bundle.tar.gz")])).stdout.split("\n");
    expect(list).toContain("results/metrics.json");
    expect(list).toContain("spec/specs/voice-command.yaml");
    expect(list).toContain("lock.json");
    expect(list.some((f) => f.startsWith("outputs/download/"))).toBe(false);
  });

  it("verifies in a directory with nothing else", async () => {
    const r = await verify(p.path("bundle.tar.gz"));
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const rep = JSON.parse(r.stdout);
    expect(rep.checks.map((c: { name: string; ok: boolean | null }) => [c.name, c.ok])).toEqual([
      ["spec", true],
      ["members", true],
      ["records", true],
      ["outputs", true],
      ["data", null],
      ["replay", true],
    ]);
    const text = await elsewhere.run(["verify", p.path("bundle.tar.gz")]);
    expect(text.stdout).toMatch(/verified: the published result is reproduced/);
  });

  it("checks the data against the pins when given a copy", async () => {
    const ok = await verify(p.path("bundle.tar.gz"), "--data-dir", p.path("specs/voice-command/sample"));
    expect(JSON.parse(ok.stdout).checks[4]).toMatchObject({ name: "data", ok: true });
    p.edit("specs/voice-command/sample/benchmark/rules_v0.1.txt", (t) => t + "x");
    const bad = await verify(p.path("bundle.tar.gz"), "--data-dir", p.path("specs/voice-command/sample"));
    p.edit("specs/voice-command/sample/benchmark/rules_v0.1.txt", (t) => t.slice(0, -1));
    expect(bad.exitCode).toBe(1);
    expect(JSON.parse(bad.stdout).checks[4].lines.join("\n")).toMatch(/rules_v0\.1\.txt: sha256/);
  });

  it("catches an edited reply", async () => {
    const dir = elsewhere.path(await unpack("reply"));
    const file = `${dir}/outputs/model/replies`;
    const rows = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    rows[0].text = JSON.stringify({
      response: "execute",
      actions: [{ type: "STOP", target: null, instrument: null, direction: null, magnitude: null }],
      message: "",
    });
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = await verify(dir);
    expect(r.exitCode).toBe(1);
    const rep = JSON.parse(r.stdout);
    expect(rep.checks[3].lines.join("\n")).toMatch(
      /replies\.jsonl \(model\/replies\) was changed after the build/,
    );
    expect(
      rep.differences.some((d: { what: string }) => d.what.startsWith(`items.jsonl ${rows[0].id}`)),
    ).toBe(true);
  });

  it("catches an edited metric, even with its recorded hash edited to match", async () => {
    const dir = elsewhere.path(await unpack("metric"));
    const file = `${dir}/outputs/bootstrap/metrics`;
    const m = JSON.parse(readFileSync(file, "utf8"));
    m.metrics.exact_match.value = 0.9;
    const text = JSON.stringify(m, null, 2) + "\n";
    writeFileSync(file, text);
    const r = await verify(dir);
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).checks[3].lines.join("\n")).toMatch(
      /metrics\.json \(bootstrap\/metrics\) was changed/,
    );
    // Now also forge the recorded hash: the replay still recomputes the true value.
    const b = JSON.parse(readFileSync(`${dir}/bundle.json`, "utf8"));
    b.stages.bootstrap.outputs.metrics = (await import("node:crypto"))
      .createHash("sha256")
      .update(text)
      .digest("hex");
    writeFileSync(`${dir}/bundle.json`, JSON.stringify(b));
    writeFileSync(`${dir}/results/metrics.json`, text);
    const forged = JSON.parse((await verify(dir)).stdout);
    expect(forged.checks.find((c: { name: string }) => c.name === "outputs").ok).toBe(true);
    expect(forged.ok).toBe(false);
    expect(forged.differences).toContainEqual(
      expect.objectContaining({ what: "metrics.json metrics.exact_match.value", published: 0.9 }),
    );
  });

  it("catches a spec edited without its hash", async () => {
    const dir = elsewhere.path(await unpack("spec"));
    const file = `${dir}/spec/specs/voice-command.yaml`;
    writeFileSync(
      file,
      readFileSync(file, "utf8")
        .replace(/(\n\s+request:\n(?:.*\n)*?\s+max_tokens: )800\n/, "$11024\n")
        .replace(/^spec_hash: .*\n/m, ""),
    );
    const r = await verify(dir);
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).checks[0]).toMatchObject({ name: "spec", ok: false });
    expect(JSON.parse(r.stdout).checks[0].lines[0]).toMatch(/the spec was edited/);
  });

  it("shows how a local spec of the same task differs", async () => {
    p.edit("specs/voice-command.yaml", (t) => t.replace("resamples: 1000", "resamples: 2000"));
    const r = await p.run(["verify", "bundle.tar.gz"]);
    p.edit("specs/voice-command.yaml", (t) => t.replace("resamples: 2000", "resamples: 1000"));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        String.raw`local spec: specs/voice-command\.yaml differs from the bundled spec[\s\S]*` +
          "/stages/bootstrap/params/resamples: 1000 -> 2000",
      ),
    );
  });

  it("refuses what is not a result or not a bundle", async () => {
    expect((await p.run(["export", "specs", "-o", "x.tar.gz"])).stderr).toMatch(
      /not a result directory of a medbench build/,
    );
    writeFileSync(p.path("junk.tar.gz"), "not a tarball");
    const r = await p.run(["verify", "junk.tar.gz"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/is not a medbench bundle/);
  });
});

describe("verify --live", () => {
  it("reports exactly the verdicts that a rerun changes", async () => {
    const base = await startFake({ policy: "voice-command" });
    const variant = await startFake({ policy: "voice-command", variant: 7 });
    const routes = (url: string) =>
      `routes:\n  fake:\n    base_url: ${url}\n    request:\n` +
      "      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n";
    const a = new Project(),
      b = new Project(),
      v = new Project(false);
    try {
      a.write("routes.yaml", routes(base.url));
      b.write("routes.yaml", routes(variant.url));
      v.write("routes.yaml", routes(variant.url));
      for (const q of [a, b])
        expect(
          (
            await q.run([
              "build",
              "specs/voice-command.yaml",
              "--model",
              "fake/m",
              "--registry",
              "routes.yaml",
            ])
          ).exitCode,
        ).toBe(0);
      expect(
        (await a.run(["export", "results/kor-surgical-robot-voice-command/fake_m", "-o", "b.tar.gz"]))
          .exitCode,
      ).toBe(0);
      // What a rerun on the variant server really changes: the two builds' item verdicts.
      const items = (q: Project) =>
        new Map(
          q
            .read("results/kor-surgical-robot-voice-command/fake_m/items.jsonl")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
            .map((i) => [i.id, i.verdicts.exact]),
        );
      const ia = items(a),
        ib = items(b);
      const changed = [...ia.keys()].filter((id) => ia.get(id) !== ib.get(id)).sort();
      expect(changed.length).toBeGreaterThan(0);
      const r = await v.run(["verify", a.path("b.tar.gz"), "--live", "--registry", "routes.yaml", "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const live = JSON.parse(r.stdout).live;
      const reported = live.verdicts
        .filter((x: { key: string }) => x.key === "exact")
        .flatMap((x: { items: string[] }) => x.items)
        .sort();
      expect(reported).toEqual(changed);
      expect(live.request_differences).toEqual([]);
      const em = live.metrics.find((m: { metric: string }) => m.metric === "exact_match");
      expect(em.live).toBe(
        JSON.parse(b.read("results/kor-surgical-robot-voice-command/fake_m/metrics.json")).metrics
          .exact_match.value,
      );
      // Live replies went to their own namespace; the published ones were not touched.
      expect(v.exists("cache/memo/live")).toBe(true);
      expect(v.exists("cache/memo/requests")).toBe(false);
      const text = await v.run(["verify", a.path("b.tar.gz"), "--live", "--registry", "routes.yaml"]);
      expect(text.stdout).toMatch(
        /exact on clean: \d+ of 42 verdicts differed \(\d+ to true, \d+ to false\)/,
      );
    } finally {
      await base.close();
      await variant.close();
      a.remove();
      b.remove();
      v.remove();
    }
  });
});
