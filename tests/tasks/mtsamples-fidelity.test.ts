// MTSamples Replicate against the reference code run once (scripts/reference/mtsamples_ref.py, which holds
// copies of HELM's and MedARC's functions -> tests/data/golden/fidelity/mtsamples.json): instances of both
// variants on the 1,269 notes, the judge prompt fill, and every judge reply as HELM and MedARC read it.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { extract, type Variant } from "../../tasks/mtsamples/instances.js";
import { fillJudge } from "../../tasks/mtsamples/judges.js";
import { helmReading, medarcReading } from "../../tasks/mtsamples/readings.js";
import { score } from "../../tasks/mtsamples/scorer.js";
import { testData } from "../support/helpers.js";
import { Project } from "../support/rig.js";
import { readRecords, type RequestRecord } from "../../src/contract/records.js";

interface Golden {
  instances: Record<
    Variant,
    Record<string, { input_sha256?: string; reference?: string; skipped?: string }>
  >;
  fills: { template: string; values: Record<string, string>; prompt: string }[];
  replies: {
    text: string;
    helm: { valid: boolean; scores?: number[]; crash?: string };
    medarc: { score?: number; crash?: string };
  }[];
  juries: {
    replies: (string | null)[];
    helm: { score?: number; crash?: string };
    medarc: { score: number };
  }[];
}
const golden = JSON.parse(readFileSync(testData("golden/fidelity/mtsamples.json"), "utf8")) as Golden;
const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("instances as the reference code builds them", () => {
  const dir = testData("mtsamples_processed");
  const files = readdirSync(dir).filter((f) => f.endsWith(".txt"));
  it.each<Variant>(["helm", "medarc"])("%s: every note's input and reference", (variant) => {
    const got: Record<string, unknown> = {};
    for (const f of files) {
      const x = extract(f, readFileSync(`${dir}/${f}`, "utf8"), variant);
      if (x.ok) got[f] = { input_sha256: sha(x.instance.input), reference: x.instance.reference };
      else if (x.reason !== "no PLAN, SUMMARY or FINDINGS section") got[f] = { skipped: true };
    }
    const want = Object.fromEntries(
      Object.entries(golden.instances[variant]).map(([f, e]) => [
        f,
        e.skipped ? { skipped: true } : { input_sha256: e.input_sha256, reference: e.reference },
      ]),
    );
    expect(Object.keys(want).length).toBe(540);
    expect(got).toEqual(want);
  });
});

describe("judge prompt: one pass, values verbatim (HELM's Template.substitute)", () => {
  it.each(golden.fills.map((f, i) => [i, f] as const))("fill %i", (_, f) => {
    const v = f.values;
    expect(
      fillJudge(f.template, {
        patient: v.patient_information!,
        response: v.response!,
        gold: v.gold_response!,
      }),
    ).toBe(f.prompt);
  });
});

describe("judge replies", () => {
  const cases = golden.replies.map((r) => [JSON.stringify(r.text).slice(0, 70), r] as const);
  it.each(cases)("HELM: %s", (_, r) => {
    const got = helmReading(r.text);
    if (r.helm.crash) expect(got).toEqual({ ok: false, crash: r.helm.crash });
    else if (!r.helm.valid) expect(got).toEqual({ ok: false });
    else expect(got).toEqual({ ok: true, scores: r.helm.scores!.map(Number) });
  });
  it.each(cases)("MedARC: %s", (_, r) => {
    const got = medarcReading(r.text);
    if (r.medarc.crash) expect(got.crash).toBe(r.medarc.crash);
    else expect([got.score, got.crash]).toEqual([r.medarc.score, undefined]);
  });
  it.each(golden.juries.map((j, i) => [i, j] as const))("instance %i: jury scores", (_, j) => {
    const req = { id: "all/x", messages: [], meta: { file: "x.txt", source: "PLAN" } };
    const judged = j.replies.map((text, k) => ({ judge: `j${k}`, replies: { "all/x": text } }));
    const v = score([req], [{ ok: true, value: "plan" }], judged).items[0]!.verdicts;
    expect(v.score).toBe(j.medarc.score);
    if (j.helm.crash === undefined) expect(v.helm_jury).toBe(j.helm.score);
    else {
      // HELM raises on this instance; medbench drops the judge whose reply raises (and says so).
      const judges = v.judges as Record<string, { helm_raises?: string }>;
      expect(Object.values(judges).some((x) => x.helm_raises === j.helm.crash)).toBe(true);
    }
  });
});

describe("through the CLI", () => {
  it("a MedARC-variant build sends each note's input as MedARC's code makes it", async () => {
    const p = new Project();
    p.edit("specs/mtsamples.yaml", (t) => t.replace("variant: helm ", "variant: medarc "));
    const r = await p.run([
      "build",
      "specs/mtsamples.yaml",
      "--data-dir",
      testData("mtsamples_processed"),
      "--quiet",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const sent = readRecords(
      "requests",
      p.read("results/mtsamples-replicate/medbench_impression/requests.jsonl"),
    ) as (RequestRecord & { meta: { file: string } })[];
    const got = Object.fromEntries(
      sent.map((q) => [q.meta.file, sha(q.messages.find((m) => m.role === "user")!.content)]),
    );
    const want = Object.fromEntries(
      Object.entries(golden.instances.medarc).map(([f, e]) => [f, e.input_sha256]),
    );
    expect(got).toEqual(want);
    expect(
      sent.filter((q) => q.messages.find((m) => m.role === "user")!.content.endsWith("\n")).length,
    ).toBe(
      Object.values(golden.instances.medarc).filter(
        (e) => (e as { input_ends_with_newline?: boolean }).input_ends_with_newline,
      ).length,
    );
    p.remove();
  });
});
