// MTSamples Replicate: HELM's instances on the real notes, the judges' parsing rules, and the build with
// a judge stage against a local copy served over HTTP and the fake server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import type { AddressInfo } from "node:net";
import { extract } from "../../tasks/mtsamples/instances.js";
import { helmParse, helmScores, medarcParse, medarcScore } from "../../tasks/mtsamples/judge-readings.js";
import { score } from "../../tasks/mtsamples/scorer.js";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";
import { startFake } from "../support/fake.js";

const notes = testData("mtsamples_processed");

describe("instances (HELM, and MedARC's variant)", () => {
  it.each([
    [
      "the first line after PLAN:",
      "A\nPLAN: Rest.\nMore.",
      { input: "A", reference: "Rest.", source: "PLAN" },
    ],
    [
      "plan before summary before findings",
      "FINDINGS: f\nSUMMARY: s\nPLAN: p",
      { reference: "p", source: "PLAN" },
    ],
    [
      "an empty plan line falls back to summary",
      "SUMMARY: s\nPLAN:\nnext line",
      { reference: "s", source: "SUMMARY" },
    ],
    [
      "SUMMARY stays in the input when it is the reference",
      "Note\nSUMMARY: s",
      { input: "Note\nSUMMARY: s", reference: "s" },
    ],
    [
      "ASSESSMENT AND PLAN: leaves a dangling ASSESSMENT AND",
      "Hx\nASSESSMENT AND PLAN: Go home.",
      { input: "Hx\nASSESSMENT AND", reference: "Go home." },
    ],
  ])("%s", (_, text, want) => {
    const x = extract("n.txt", text as string, "helm");
    expect(x.ok && x.instance).toMatchObject(want as object);
  });
  it("skips a file whose key is present only in another case (HELM), keeps it (MedARC)", () => {
    expect(extract("n.txt", "Plan: Rest.", "helm")).toMatchObject({ ok: false });
    expect(extract("n.txt", "Plan: Rest.", "medarc")).toMatchObject({
      ok: true,
      instance: { reference: "Rest." },
    });
    expect(extract("n.txt", "nothing here", "helm")).toMatchObject({
      ok: false,
      reason: "no PLAN, SUMMARY or FINDINGS section",
    });
  });
  it("on the 1,269 notes: the counts of an independent reading of HELM's procedure", () => {
    const files = readdirSync(notes)
      .filter((f) => f.endsWith(".txt"))
      .sort();
    expect(files.length).toBe(1269);
    const run = (v: "helm" | "medarc") =>
      files.map((f) => extract(f, readFileSync(resolve(notes, f), "utf8"), v));
    const helm = run("helm");
    const ok = helm.flatMap((x) => (x.ok ? [x.instance] : []));
    const sources = ok.reduce<Record<string, number>>(
      (a, i) => ({ ...a, [i.source]: (a[i.source] ?? 0) + 1 }),
      {},
    );
    expect({ instances: ok.length, sources }).toEqual({
      instances: 539,
      sources: { PLAN: 338, SUMMARY: 16, FINDINGS: 185 },
    });
    // The one file lost to the case-sensitive split (docs/reference/mtsamples.md), which MedARC keeps.
    expect(
      helm
        .filter((x) => !x.ok && x.reason !== "no PLAN, SUMMARY or FINDINGS section")
        .map((x) => (x.ok ? "" : x.file)),
    ).toEqual(["OB-GYN Consultation - 4.txt"]);
    expect(run("medarc").filter((x) => x.ok).length).toBe(540);
  });
});

describe("judge replies", () => {
  const c = (s: unknown) => ({ score: s, explanation: "e" });
  const full = { accuracy: c(4), completeness: c(3), clarity: c(5) };
  it.each<[string, string, number[] | null]>([
    ["a JSON object", JSON.stringify(full), [4, 3, 5]],
    ["text around it", `Sure.\n${JSON.stringify(full)}\nDone.`, [4, 3, 5]],
    ["the missing final } is repaired once", JSON.stringify(full).slice(0, -1), [4, 3, 5]],
    ["two missing } are not", JSON.stringify(full).slice(0, -2), null],
    ["a missing criterion drops the judge", JSON.stringify({ accuracy: c(4), completeness: c(3) }), null],
    ["a missing explanation drops the judge", JSON.stringify({ ...full, clarity: { score: 5 } }), null],
    [
      "int() truncates floats and reads integer strings",
      JSON.stringify({ accuracy: c(4.9), completeness: c("3"), clarity: c(5) }),
      [4, 3, 5],
    ],
    ["int() fails on a non-integer string", JSON.stringify({ ...full, clarity: c("4.5") }), null],
    ["out-of-range scores are kept as they are", JSON.stringify({ ...full, accuracy: c(7) }), [7, 3, 5]],
    ["no JSON at all", "It is fine, a four.", null],
  ])("HELM: %s", (_, text, want) => expect(helmScores(text)).toEqual(want));

  it.each<[string, string, { score: number; valid: number }]>([
    ["(s - 1) / 4 averaged", JSON.stringify(full), { score: (3 / 4 + 2 / 4 + 1) / 3, valid: 3 }],
    [
      "clamped to 1-5",
      JSON.stringify({ accuracy: c(7), completeness: c(0), clarity: c(3) }),
      { score: (1 + 0 + 0.5) / 3, valid: 3 },
    ],
    [
      "averaged over the valid criteria only",
      JSON.stringify({ accuracy: c(5), completeness: c("n/a") }),
      { score: 1, valid: 1 },
    ],
    ["0 when none is valid", "no json", { score: 0, valid: 0 }],
    [
      "the object ending at the last } (of two, the second)",
      `${JSON.stringify({ accuracy: c(1), completeness: c(1), clarity: c(1) })}\n${JSON.stringify(full)}`,
      { score: (3 / 4 + 2 / 4 + 1) / 3, valid: 3 },
    ],
    [
      "braces in prose after the JSON: nothing parses",
      `${JSON.stringify(full)} and {"note": "}`,
      { score: 0, valid: 0 },
    ],
  ])("MedARC: %s", (_, text, want) => {
    const got = medarcScore(text);
    expect(got.valid).toBe(want.valid);
    expect(got.score).toBeCloseTo(want.score, 12);
  });
  it("parsers differ where the documents say they do", () => {
    expect(helmParse('{"a": 1} text {"b": 2}')).toBeNull(); // greedy span is not JSON
    expect(medarcParse('{"a": 1} text {"b": 2}')).toEqual({ b: 2 }); // the last } and back to its {
  });
  it("instance scores: HELM 1.0 and MedARC 0 when no judge succeeded; failed calls left out", () => {
    const req = { id: "all/x", messages: [], meta: { file: "x.txt", source: "PLAN" } };
    const out = score(
      [req],
      [{ ok: true, value: "plan" }],
      [
        { judge: "a", replies: { "all/x": "garbage" } },
        { judge: "b", replies: { "all/x": null } },
      ],
    );
    expect(out.items[0]!.verdicts).toMatchObject({ helm_jury: 1, score: 0 });
    expect((out.items[0]!.verdicts.judges as Record<string, unknown>).b).toEqual({ call_failed: true });
  });
});

describe("medbench build specs/mtsamples.yaml", () => {
  let files: Server;
  let fake: {
    url: string;
    stats: { received: { body: { model: string; messages: { content: string }[] } }[] };
    close(): Promise<void>;
  };
  let p: Project;
  const served: string[] = [];
  let tamper = "";
  beforeAll(async () => {
    files = createServer((req, res) => {
      const name = decodeURIComponent(new URL(req.url!, "http://x").pathname.split("/").pop()!);
      served.push(name);
      try {
        const body = readFileSync(resolve(notes, name));
        res.writeHead(200).end(name === tamper ? Buffer.concat([body, Buffer.from("x")]) : body);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => files.listen(0, "127.0.0.1", r));
    fake = await startFake({ policy: "mtsamples" });
    p = new Project();
    p.edit("specs/mtsamples.yaml", (t) =>
      t.replace(
        /base_url: https:\/\/raw\.githubusercontent\.com\S+/,
        `base_url: http://127.0.0.1:${(files.address() as AddressInfo).port}/raw/mtsamples_processed/`,
      ),
    );
    p.write("routes.yaml", `routes:\n  fake:\n    base_url: ${fake.url}\n    concurrency: 16\n`);
  });
  afterAll(async () => {
    await fake.close();
    await new Promise<void>((r) => files.close(() => r()));
    p.remove();
  });
  const build = (...judges: string[]) =>
    p.run([
      "build",
      "specs/mtsamples.yaml",
      "--model",
      "fake/gen",
      "--registry",
      "routes.yaml",
      "--json",
      ...judges.flatMap((j) => ["--judge", j]),
    ]);
  const status = (r: { stdout: string }) =>
    Object.fromEntries(
      JSON.parse(r.stdout.trim().split("\n").pop()!).stages.map((s: { name: string; status: string }) => [
        s.name,
        s.status,
      ]),
    );
  const sentBy = (model: string) => fake.stats.received.filter((r) => r.body.model === model).length;

  it("downloads every pinned note by its encoded URL and judges every instance", async () => {
    const r = await build("fake/j1");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(new Set(served).size).toBe(1269);
    const m = JSON.parse(p.read("results/mtsamples-replicate/fake_gen/metrics.json"));
    expect(m.tables.instances).toBe(539);
    expect(m.tables.files_read).toBe(1269);
    expect(m.tables.reference_sources).toEqual({ PLAN: 338, SUMMARY: 16, FINDINGS: 185 });
    expect(m.primary).toBe("judge_score");
    expect(m.metrics.judge_score.n).toBe(539);
    expect(m.metrics.helm_jury_score.unit).toBe("score");
    expect(m.metrics.judges["fake/j1"].request.max_tokens).toBe(4096);
    expect(sentBy("gen")).toBe(539);
    expect(sentBy("j1")).toBe(539);
  });

  it("adding a second judge calls only that judge", async () => {
    const before = fake.stats.received.length;
    const r = await build("fake/j1", "fake/j2");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(status(r)).toMatchObject({
      download: "fresh",
      prompts: "fresh",
      model: "fresh",
      parse: "fresh",
      judge: "ran",
    });
    expect(fake.stats.received.slice(before).every((x) => x.body.model === "j2")).toBe(true);
    expect(sentBy("j2")).toBe(539);
    const m = JSON.parse(p.read("results/mtsamples-replicate/fake_gen/metrics.json"));
    expect(Object.keys(m.tables.agreement)).toEqual(["fake/j1 vs fake/j2"]);
    expect(m.metrics["judge_score:fake/j2"].n).toBe(539);
  });

  it("a changed judge prompt reruns only the judge stage and what follows", async () => {
    p.edit("specs/mtsamples/prompts/judge.txt", (t) =>
      t.replace("You are a medical expert", "You are an experienced medical expert"),
    );
    const st = await p.run([
      "status",
      "specs/mtsamples.yaml",
      "--model",
      "fake/gen",
      "--judge",
      "fake/j1",
      "--judge",
      "fake/j2",
      "--registry",
      "routes.yaml",
    ]);
    expect(st.stdout).toMatch(/stale\s+judge[\s\S]*input judge changed/);
    expect(st.stdout).toMatch(/fresh\s+model/);
    const before = sentBy("gen");
    const r = await build("fake/j1", "fake/j2");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(status(r)).toMatchObject({ model: "fresh", judge: "ran" });
    expect(sentBy("gen")).toBe(before);
  });

  it("exports a result that verifies by replay, judges included", async () => {
    expect(
      (await p.run(["export", "results/mtsamples-replicate/fake_gen", "-o", "m.tar.gz"])).exitCode,
    ).toBe(0);
    const r = await p.run(["verify", "m.tar.gz", "--json"]);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(JSON.parse(r.stdout).checks.find((c: { name: string }) => c.name === "replay").ok).toBe(true);
  });

  it("refuses a note whose content differs from its pin, by name", async () => {
    const q = new Project();
    q.edit("specs/mtsamples.yaml", () => p.read("specs/mtsamples.yaml"));
    tamper = "Abdominal Pain - Consult.txt";
    const r = await q.run(["build", "specs/mtsamples.yaml"]);
    tamper = "";
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/Abdominal Pain - Consult\.txt: sha256 mismatch/);
    q.remove();
  });
});
