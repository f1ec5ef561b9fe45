// Results of the bundled synthetic sample: labelled synthetic in metrics.json, after the
// build and in the report; a build of the real release (--data-dir) writes to a folder of its own, so
// neither result overwrites the other.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync } from "node:fs";
import { Project } from "../support/rig.js";
import { launchChromium } from "../support/browser.js";

const SAMPLE = "results/kor-surgical-robot-voice-command/medbench_prior";
const RELEASE = `${SAMPLE}.release`;
const LABEL = "sample/voice-command-synthetic-v1"; // the spec's label of its bundled sample

describe("the bundled synthetic sample's results (14.15)", () => {
  let p: Project;
  beforeAll(() => {
    p = new Project();
    // A "release" the user downloaded: here a copy of the sample's files, read through --data-dir.
    cpSync(p.path("specs/voice-command/sample"), p.path("release"), { recursive: true });
  });
  afterAll(() => p?.remove());

  it("are labelled synthetic in metrics.json and after the build", async () => {
    const r = await p.run(["build", "specs/voice-command.yaml"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`notice built from the bundled SYNTHETIC sample ${LABEL}`);
    const m = JSON.parse(p.read(`${SAMPLE}/metrics.json`));
    expect(m.synthetic_sample).toBe(LABEL);
    expect(m.notices.join("\n")).toMatch(/SYNTHETIC sample .* says nothing about any model/);
    // Said again by a build that finds everything fresh.
    const again = await p.run(["build", "specs/voice-command.yaml"]);
    expect(again.stdout).toMatch(/fresh bootstrap/);
    expect(again.stderr).toContain("SYNTHETIC sample");
  });

  it("a --data-dir build writes its own folder, unlabelled; the sample's result stays", async () => {
    const sampleBefore = p.snapshot([SAMPLE]);
    const r = await p.build(["--data-dir", "release"]);
    expect(r.summary.results).toBe(p.path(RELEASE));
    const m = JSON.parse(p.read(`${RELEASE}/metrics.json`));
    expect(m.synthetic_sample).toBeUndefined();
    expect(m.notices ?? []).toEqual([]);
    expect(r.run.stderr).not.toContain("SYNTHETIC");
    expect(p.snapshot([SAMPLE])).toBe(sampleBefore);
    // And the other way round: a sample build leaves the release's result alone.
    const releaseBefore = p.snapshot([RELEASE]);
    const s = await p.build();
    expect(s.summary.results).toBe(p.path(SAMPLE));
    expect(p.snapshot([RELEASE])).toBe(releaseBefore);
    // status compares each with its own folder.
    for (const args of [[], ["--data-dir", "release"]]) {
      const st = await p.run(["status", "specs/voice-command.yaml", ...args]);
      expect(st.exitCode, st.stderr).toBe(0);
      expect(st.stdout).not.toMatch(/stale|never built/);
    }
  });

  it("the report shows which run is the synthetic sample's", async () => {
    const r = await p.run(["report", "specs/voice-command.yaml", "-o", "r.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`file://${p.path("r.html")}`);
      await page.waitForSelector("body[data-rendered=true]");
      const rows = await page.locator('section table[data-table="runs"] tbody tr').allInnerTexts();
      expect(rows).toHaveLength(2);
      expect(rows.filter((t) => t.includes("synthetic sample"))).toHaveLength(1);
    } finally {
      await browser.close();
    }
  });
});
