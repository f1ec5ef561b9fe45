// Porting a task onto a new contract must not change its results: metrics.json and items.jsonl of five
// builds equal, byte for byte, what the pre-v2 code built, apart from the version fields and two provenance
// fields added since (tests/data/contract-golden/README.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";
import { startFake, type Fake } from "../support/fake.js";

/** The version fields a new medbench or hash recipe may change, the labels of a result built from the
 *  bundled synthetic sample (added since), a route's count of replies that are no
 *  text answer (metrics.reply_audit, added since) and its token totals (metrics.tokens, added since);
 *  everything else must stay. */
const withoutVersions = (text: string) =>
  text
    .replace(/^ {2}"(medbench_version|hash_recipe)": .*$/gm, '  "$1": "<version>",')
    .replace(/^ {2}"notices": \[\n(?: {4}.*\n)* {2}\],\n/m, "")
    .replace(/^ {2}"synthetic_sample": .*\n/m, "")
    .replace(/^( +)"reply_audit": \{\n(?:\1 {2}.*\n)*\1\},\n/gm, "")
    .replace(/^( +)"tokens": \{\n(?:\1 {2}.*\n)*\1\},\n/gm, "");

const golden = (run: string, file: string) => readFileSync(testData("contract-golden", run, file), "utf8");

describe("results are those of the pre-v2 code", () => {
  let p: Project;
  const fakes: Fake[] = [];
  beforeAll(async () => {
    p = new Project();
    const vc: Fake = await startFake({ policy: "voice-command" });
    const mt: Fake = await startFake({ policy: "mtsamples" });
    fakes.push(vc, mt);
    p.write(
      "routes.yaml",
      `routes:
  fake:
    base_url: ${vc.url}
    concurrency: 8
    request:
      thinking_off: { chat_template_kwargs: { enable_thinking: false } }
  fakem:
    base_url: ${mt.url}
    concurrency: 8
`,
    );
  });
  afterAll(async () => {
    for (const f of fakes) await f.close();
    p.remove();
  });

  const notes = testData("mtsamples_processed");
  const mtsamples = ["build", "specs/mtsamples.yaml", "--data-dir", notes];
  it.each([
    ["kor-surgical-robot-voice-command/medbench_prior", ["build", "specs/voice-command.yaml"]],
    [
      "kor-surgical-robot-voice-command/medbench_keyword-stop",
      ["build", "specs/voice-command.yaml", "--model", "medbench/keyword-stop"],
    ],
    [
      "kor-surgical-robot-voice-command/fake_vc",
      ["build", "specs/voice-command.yaml", "--model", "fake/vc", "--registry", "routes.yaml"],
    ],
    ["mtsamples-replicate/medbench_impression", mtsamples],
    [
      "mtsamples-replicate/fakem_gen",
      [...mtsamples, "--model", "fakem/gen", "--judge", "fakem/j1", "--judge", "fakem/j2"],
      ["--registry", "routes.yaml"],
    ],
  ] as [string, string[], string[]?][])("%s", async (run, args, more = []) => {
    const r = await p.run([...args, ...more, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = `results/${run}`;
    expect(p.read(`${dir}/items.jsonl`) === golden(run, "items.jsonl")).toBe(true);
    expect(withoutVersions(p.read(`${dir}/metrics.json`))).toBe(
      withoutVersions(golden(run, "metrics.json")),
    );
  });
});
