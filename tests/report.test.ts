// The HTML report in a real browser: Debian's chromium driven by playwright-core, offline, no console errors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { Project } from "./rig.js";
import { REPO } from "./helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

describe("medbench report", () => {
  let p: Project;
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium), as .ci/run does`,
      );
    p = new Project();
    await p.build();
    await p.build(["--model", "medbench/keyword-stop"]);
    await p.build(["--subset", "clean", "--limit", "5"]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
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
    const runs = section.locator("table").first().locator("tbody tr");
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

  it("says so when a spec has no runs yet", async () => {
    const r = await p.run(["report", "-o", "all.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(p.read("all.html")).toContain("mtsamples-replicate");
  });
});
