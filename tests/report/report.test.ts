// The HTML report in a real browser: Debian's chromium driven by playwright-core, offline, no console
// errors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser } from "playwright-core";
import { Project } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { startFake } from "../support/fake.js";
import { launchChromium } from "../support/browser.js";

describe("medbench report", () => {
  let p: Project;
  let browser: Browser;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    await p.build(["--model", "medbench/keyword-stop"]);
    await p.build(["--subset", "clean", "--limit", "5"]);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    p?.remove();
  });

  it("renders every run's tables and charts without errors, offline", async () => {
    const r = await p.run(["report", "specs/voice-command.yaml", "-o", "report.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/3 runs of 1 tasks/);
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("request", (q) => {
      if (!q.url().startsWith("file:")) requests.push(q.url());
    });
    await page.goto(`file://${p.path("report.html")}`);
    await page.waitForSelector("body[data-rendered=true]");
    expect(errors).toEqual([]);
    expect(requests).toEqual([]); // nothing fetched: the chart code is inlined
    const section = page.locator('section[data-slug="kor-surgical-robot-voice-command"]');
    const runs = section.locator('table[data-table="runs"] tbody tr');
    expect(await runs.count()).toBe(3);
    expect(await runs.allInnerTexts()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/medbench\/prior( \(synthetic sample[^)]*\))?\s+exact_match [\d.]+%/),
        expect.stringMatching(/partial/),
      ]),
    );
    // A forest plot, three breakdown charts (subset, command type, form), all drawn.
    expect(await section.locator("canvas").count()).toBe(4);
    const drawn = await section
      .locator("canvas")
      .evaluateAll((cs) =>
        cs.map((c) => (c as HTMLCanvasElement).width > 0 && (c as HTMLCanvasElement).height > 0),
      );
    expect(drawn.every(Boolean)).toBe(true);
    expect(await section.getByText("Paired comparisons").count()).toBe(1);
    expect(await section.locator("details").count()).toBe(3);
    mkdirSync(resolve(REPO, "test-artifacts"), { recursive: true });
    await page.screenshot({ path: resolve(REPO, "test-artifacts/report.png"), fullPage: true });
  });

  it("shows each task's leaderboard by its primary metric, with tags, and its check", async () => {
    const models = ["medbench/prior", "medbench/random", "medbench/note-errors-conjunction-lr"];
    for (const m of models) {
      const b = await p.run(["build", "specs/note-errors.yaml", "--model", m]);
      expect(b.exitCode, b.stderr).toBe(0);
    }
    // A results folder whose metrics.json is `{}` is listed as broken, not hidden.
    mkdirSync(p.path("results/syn-snuh-note-errors/broken/neutral-greedy"), { recursive: true });
    p.write("results/syn-snuh-note-errors/broken/neutral-greedy/metrics.json", "{}");
    const r = await p.run(["report", "specs/note-errors.yaml", "-o", "ne.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const check = await p.run(["check", "specs/note-errors.yaml", "--json"]);
    const expected = JSON.parse(check.stdout) as {
      status: string;
      criteria: { id: string; status: string }[];
    };
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`file://${p.path("ne.html")}`);
    await page.waitForSelector("body[data-rendered=true]");
    expect(errors).toEqual([]);
    const section = page.locator('section[data-slug="syn-snuh-note-errors"]');
    const rows = await section.locator('table[data-table="leaderboard"] tbody tr').allInnerTexts();
    // Sorted by BCR as each metrics.json records it, the sample's tag on every row.
    const bcr = (m: string) =>
      JSON.parse(p.read(`results/syn-snuh-note-errors/${m.replace("/", "_")}/neutral-greedy/metrics.json`))
        .metrics.bcr.value as number;
    const order = [...models].sort((a, b) => bcr(b) - bcr(a));
    expect(rows.map((t) => t.split("\t")[1])).toEqual(order);
    expect(rows[0]).toMatch(new RegExp(`${(100 * bcr(order[0]!)).toFixed(1)}%`));
    expect(rows.every((t) => t.includes("synthetic-sample"))).toBe(true);
    expect(rows[0]).toMatch(/reads-input/);
    // The check table: every criterion with the status `medbench check` gives it.
    const checkRows = await section.locator('table[data-table="check"] tbody tr').allInnerTexts();
    expect(checkRows.map((t) => t.split("\t").slice(0, 2))).toEqual(
      expected.criteria.map((c) => [c.id, c.status]),
    );
    expect(expected.status).toBe("incomplete"); // no reference runs yet
    expect(await section.locator(".check-incomplete").innerText()).toMatch(/SYNTHETIC sample/);
    expect(await section.innerText()).toMatch(
      /Broken runs[\s\S]*broken\/neutral-greedy\s+metrics.json has no slug/,
    );
    await page.screenshot({ path: resolve(REPO, "test-artifacts/report-note-errors.png"), fullPage: true });
  });

  it("marks the rows of a run that deviated from its spec, and lists its deviations", async () => {
    const fake = await startFake({ policy: "voice-command" });
    try {
      const env = { OPENAI_API_KEY: "sk-test-report-0123456789", OPENAI_BASE_URL: fake.url };
      const b = await p.run(["build", "specs/voice-command.yaml", "--model", "openai/gpt-5.1"], env);
      expect(b.exitCode, b.stderr).toBe(0);
    } finally {
      await fake.close();
    }
    const r = await p.run(["report", "specs/voice-command.yaml", "-o", "deviations.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`file://${p.path("deviations.html")}`);
    await page.waitForSelector("body[data-rendered=true]");
    expect(errors).toEqual([]);
    const section = page.locator('section[data-slug="kor-surgical-robot-voice-command"]');
    for (const name of ["leaderboard", "runs"]) {
      const rows = await section.locator(`table[data-table="${name}"] tbody tr`).allInnerTexts();
      const marked = rows.filter((text) => text.includes("deviates: temperature"));
      expect(marked, name).toHaveLength(1);
      expect(marked[0]).toContain("openai/gpt-5.1");
    }
    const mark = section.locator('table[data-table="runs"] .deviates');
    expect(await mark.isVisible()).toBe(true);
    expect(await mark.getAttribute("title")).toBe(
      "temperature: the spec asks 0, left out (rule openai gpt-5.* deviate)",
    );
    // In the run's details (collapsed: their text, not what is shown).
    expect(await section.textContent()).toMatch(/deviations from the spec\s*\[/);
  });

  it("says so when a spec has no runs yet", async () => {
    const r = await p.run(["report", "-o", "all.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(p.read("all.html")).toContain("mtsamples-replicate");
  });
});
