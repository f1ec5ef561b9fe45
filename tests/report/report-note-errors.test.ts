// The note-errors page's tables in the report, read from the DOM of Debian's chromium (playwright-core): the
// score metrics (MCC, the independence ratio) on a forest plot of their own, the mean ± SD over the four
// configurations, parse failures in the audit, counts on the breakdown charts and the strict parser's BCR
// beside the headline. Each expected value is read from the runs' metrics.json.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { Project } from "../support/rig.js";
import { launchChromium } from "../support/browser.js";

const SPEC = "specs/note-errors.yaml";
const RESULTS = "results/syn-snuh-note-errors";
const pct = (x: number) => (100 * x).toFixed(1) + "%";

describe("the note-errors page's tables in the report", () => {
  let p: Project;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const metricsOf = (dir: string) => JSON.parse(p.read(`${RESULTS}/${dir}/metrics.json`));
  beforeAll(async () => {
    p = new Project();
    for (const args of [[], ["--model", "medbench/note-errors-conjunction-lr"]]) {
      const r = await p.run(["build", SPEC, "--quiet", ...args]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const all = await p.run([
      "build",
      SPEC,
      "--quiet",
      "--model",
      "medbench/random",
      "--configurations",
      "all",
    ]);
    expect(all.exitCode, all.stderr).toBe(0);
    const r = await p.run(["report", SPEC, "-o", "report.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`file://${p.path("report.html")}`);
    await page.waitForSelector("body[data-rendered=true]");
  });
  afterAll(async () => {
    await browser?.close();
    p?.remove();
  });

  it("renders without console errors", () => {
    expect(errors).toEqual([]);
  });

  it("charts MCC and the independence ratio on a scale of their own", async () => {
    const labels = JSON.parse(
      (await page.locator('[data-chart="forest-scores"]').getAttribute("data-labels")) ?? "[]",
    ) as string[];
    expect(labels).toContain("medbench/note-errors-conjunction-lr · mcc");
    expect(labels).toContain("medbench/note-errors-conjunction-lr · independence_ratio");
    const proportions = JSON.parse(
      (await page.locator('[data-chart="forest"]').getAttribute("data-labels")) ?? "[]",
    ) as string[];
    expect(proportions.some((label) => label.endsWith("· mcc"))).toBe(false);
  });

  it("shows the strict parser's BCR beside the headline", async () => {
    const board = page.locator('table[data-table="leaderboard"]');
    expect(await board.locator("thead").innerText()).toContain("bcr_strict (95% CI)");
    const strict = metricsOf("medbench_note-errors-conjunction-lr/neutral-greedy").metrics.bcr_strict;
    const row = board.locator("tbody tr", { hasText: "medbench/note-errors-conjunction-lr" });
    expect(await row.innerText()).toContain(`${pct(strict.value)} (${pct(strict.lo)} – ${pct(strict.hi)})`);
  });

  it("shows the mean ± SD over the four configurations", async () => {
    const over = metricsOf("medbench_random/all").over_configurations.bcr;
    const table = page.locator('table[data-table="over-configurations"]');
    const row = table.locator("tbody tr").filter({ has: page.locator("td", { hasText: /^bcr$/ }) });
    const text = await row.innerText();
    expect(text).toContain(`${pct(over.mean)} ± ${pct(over.sd)}`);
    expect(over.n).toBe(4);
    for (const value of Object.values(over.values) as number[]) expect(text).toContain(pct(value));
  });

  it("shows parse failures in each run's audit", async () => {
    const counts = metricsOf("medbench_prior/neutral-greedy").tables.counts;
    const prior = page.locator("details", { hasText: "medbench/prior" }).first();
    await prior.locator("summary").click();
    const row = prior.locator("tr", { hasText: "parse failures" });
    expect(await row.innerText()).toContain(
      `${counts.parse_failures_error + counts.parse_failures_clean} ` +
        `(clean ${counts.parse_failures_clean}, error ${counts.parse_failures_error})`,
    );
  });

  it("puts each cell's count on the breakdown charts", async () => {
    const breakdown = metricsOf("medbench_prior/neutral-greedy").tables.breakdowns.rule as Record<
      string,
      { n: number }
    >;
    const labels = JSON.parse(
      (await page.locator('[data-chart="breakdown-rule"]').first().getAttribute("data-labels")) ?? "[]",
    ) as string[];
    for (const [rule, cell] of Object.entries(breakdown)) expect(labels).toContain(`${rule} (n=${cell.n})`);
  });
});
