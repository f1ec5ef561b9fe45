// The report's item view in a real browser (Debian's chromium driven by playwright-core, from file://): a
// run's items from the leaderboard, filtered, one opened whole; two runs against each other; a private
// release's items without their text; a large run opened on its index and one page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { Project } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
import { syntheticProject } from "../../scripts/bench/release.mjs";
import { launchChromium } from "../support/browser.js";

const VOICE = "results/kor-surgical-robot-voice-command";
const NOTES = "results/syn-snuh-note-errors/medbench_prior/neutral-greedy";

interface Item {
  id: string;
  verdicts: Record<string, unknown>;
  parsed: unknown;
}
const lines = <T>(text: string): T[] =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as T);

/** A page of the report that records its console errors and the files it loads. */
async function open(browser: Browser, file: string) {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const errors: string[] = [];
  const loaded: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("request", (q) => loaded.push(q.url()));
  await page.goto(`file://${file}`);
  await page.waitForSelector("body[data-items=true]");
  return { page, errors, loaded };
}

const ready = (page: Page) => page.waitForSelector("#items-view[data-ready=true]");

describe("the report's item view", () => {
  let p: Project;
  let browser: Browser;
  beforeAll(async () => {
    p = new Project();
    for (const args of [[], ["--model", "medbench/keyword-stop"]]) {
      const b = await p.run(["build", "specs/voice-command.yaml", ...args]);
      expect(b.exitCode, b.stderr).toBe(0);
    }
    const b = await p.run(["build", "specs/note-errors.yaml"]);
    expect(b.exitCode, b.stderr).toBe(0);
    const r = await p.run(["report", "-o", "report.html"]);
    expect(r.exitCode, r.stderr).toBe(0);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    p?.remove();
  });

  it("opens a run from the leaderboard, filters to wrong items, and shows one whole", async () => {
    const { page, errors } = await open(browser, p.path("report.html"));
    const section = page.locator('section[data-slug="kor-surgical-robot-voice-command"]');
    const first = section.locator('table[data-table="leaderboard"] tbody tr').first();
    const model = (await first.innerText()).split("\t")[1]!;
    await first.locator("a.items-link").click();
    await ready(page);
    const dir = `${VOICE}/${model.replace("/", "_")}`;
    const items = lines<Item>(p.read(`${dir}/items.jsonl`));
    const wrong = items.filter((item) => item.verdicts.exact === false);
    await page.selectOption("#items-view select[name=verdict]", { label: "exact = false" });
    expect(await page.locator("#items-view .items-count").innerText()).toBe(
      `${wrong.length} of ${items.length} items`,
    );
    await page.locator("#items-view .items-list a").first().click();
    await page.waitForSelector(`#items-view .items-detail[data-shown="${wrong[0]!.id}"]`);
    expect(page.url()).toContain(`item=${encodeURIComponent(wrong[0]!.id)}`);
    const card = page.locator("#items-view .item-card").first();
    // The prompt as the results folder's requests.jsonl stores it (its shared parts put back).
    const requests = lines<{
      id?: string;
      shared?: Record<string, string>;
      messages?: { content: unknown }[];
    }>(p.read(`${dir}/requests.jsonl`));
    const request = requests.find((x) => x.id === wrong[0]!.id)!;
    const user = request.messages!.at(-1)!.content as string;
    expect(await card.locator(".message pre").last().innerText()).toBe(user);
    const reply = lines<{ id: string; text: string }>(p.read(`${dir}/replies.jsonl`)).find(
      (x) => x.id === wrong[0]!.id,
    )!;
    expect(await card.locator(".reply-text").innerText()).toBe(reply.text);
    expect(JSON.parse(await card.locator("pre.parsed").innerText())).toEqual(wrong[0]!.parsed);
    const exact = card.locator('table[data-table="verdicts"] tr:has(th:text-is("exact")) td');
    expect(await exact.innerText()).toBe("false");
    expect(errors).toEqual([]);
    mkdirSync(resolve(REPO, "test-artifacts"), { recursive: true });
    await page.screenshot({ path: resolve(REPO, "test-artifacts/report-item.png") });
  });

  it("compares two runs: the flips per direction, both replies side by side", async () => {
    const { page, errors } = await open(browser, p.path("report.html"));
    const section = page.locator('section[data-slug="kor-surgical-robot-voice-command"]');
    const form = section.locator(".compare-runs");
    const runA = `${VOICE}/medbench_keyword-stop`,
      runB = `${VOICE}/medbench_prior`;
    await form.locator("select[name=run-a]").selectOption({ label: `medbench/keyword-stop — ${runA}` });
    await form.locator("select[name=run-b]").selectOption({ label: `medbench/prior — ${runB}` });
    await form.locator("button").click();
    await ready(page);
    const cli = await p.run(["compare", "--json", "--flips", runA, runB]);
    expect(cli.exitCode, cli.stderr).toBe(0);
    const flips = (
      JSON.parse(cli.stdout) as { flips: { directions: Record<string, number>; items: unknown[] }[] }
    ).flips[0]!;
    expect(flips.items.length).toBeGreaterThan(0);
    // The text lists each flipped item by id with its two values; without --flips, only the counts.
    const listed = await p.run(["compare", "--flips", runA, runB]);
    for (const item of flips.items as { id: string; a: unknown; b: unknown }[])
      expect(listed.stdout).toContain(`  ${item.id}  ${JSON.stringify(item.a)} → ${JSON.stringify(item.b)}`);
    const counted = await p.run(["compare", runA, runB]);
    expect(counted.stdout).toContain(`flips on exact: ${flips.items.length} (`);
    expect(counted.stdout).not.toContain((flips.items[0] as { id: string }).id + "  ");
    const shown = await page.locator('#items-view table[data-table="flips"] tbody tr').allInnerTexts();
    expect(Object.fromEntries(shown.map((row) => row.split("\t")).map(([k, n]) => [k, Number(n)]))).toEqual(
      flips.directions,
    );
    expect(await page.locator("#items-view .items-list li").count()).toBe(flips.items.length);
    await page.locator("#items-view .items-list a").first().click();
    await page.waitForSelector("#items-view .items-detail[data-shown]");
    expect(await page.locator("#items-view .items-detail .reply-text").count()).toBe(2);
    expect(errors).toEqual([]);
    await page.screenshot({ path: resolve(REPO, "test-artifacts/report-flips.png") });
  });

  it("keeps a private release's request and reply text out of the report, and shows the pair", async () => {
    // A line of a note the requests hold: in the cache, by the hash build.json records.
    const built = JSON.parse(p.read(`${NOTES}/build.json`)) as {
      stages: Record<string, { kind: string; outputs: Record<string, string> }>;
    };
    const hash = built.stages.prompts!.outputs.requests!;
    const stored = p.read(`cache/objects/${hash.slice(0, 2)}/${hash}`);
    const note = lines<{ id?: string; messages?: { content: unknown }[] }>(stored).find((x) => x.id)!;
    const text = String(note.messages!.at(-1)!.content);
    // 40 characters of its longest line, as they read in a JSON string (the report's files are JSON).
    const line = text.split("\n").sort((left, right) => right.length - left.length)[0]!;
    const snippet = JSON.stringify(line.slice(0, 40)).slice(1, -1);
    expect(line.length).toBeGreaterThanOrEqual(40);
    const published = [p.read("report.html")];
    for (const run of readdirSync(p.path("report.items")).filter((x) => !x.startsWith(".")))
      for (const file of readdirSync(p.path("report.items", run)))
        published.push(readFileSync(p.path("report.items", run, file), "utf8"));
    expect(published.filter((x) => x.includes(snippet))).toEqual([]);

    const { page, errors } = await open(browser, p.path("report.html"));
    const section = page.locator('section[data-slug="syn-snuh-note-errors"]');
    await section.locator('table[data-table="runs"] a.items-link').first().click();
    await ready(page);
    expect(await page.locator("#items-view .withheld").innerText()).toMatch(
      /would publish the private notes/,
    );
    await page.locator("#items-view .items-list a").first().click();
    await page.waitForSelector("#items-view .items-detail[data-shown]");
    const cards = page.locator("#items-view .item-card");
    expect(await cards.count()).toBe(2);
    const sides = cards.locator('table[data-table="meta"] tr:has(th:text-is("side")) td');
    expect(await sides.allInnerTexts()).toEqual(['"error"', '"clean"']);
    expect(await page.locator("#items-view .message").count()).toBe(0);
    expect(errors).toEqual([]);
    await page.screenshot({ path: resolve(REPO, "test-artifacts/report-pair.png") });
  });

  it("refuses to replace a folder it did not write beside the page", async () => {
    mkdirSync(p.path("mine.items"));
    p.write("mine.items/notes.txt", "mine");
    const r = await p.run(["report", "-o", "mine.html"]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/mine.items exists and is not a report's items folder/);
    expect(p.read("mine.items/notes.txt")).toBe("mine");
    expect(p.exists("mine.html")).toBe(false);
  });

  it("opens a large run on its index and the one page of the item shown", async () => {
    const large = new Project();
    try {
      const { dir } = await syntheticProject(1000, large.dir);
      cpSync(join(dir, "release"), large.path("release"), { recursive: true });
      const b = await large.run(["build", "specs/voice-command.yaml", "--data-dir", "release"]);
      expect(b.exitCode, b.stderr).toBe(0);
      const r = await large.run(["report", "specs/voice-command.yaml", "-o", "large.html"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const { page, errors, loaded } = await open(browser, large.path("large.html"));
      await page.locator("a.items-link").first().click();
      await ready(page);
      const files = () => loaded.filter((url) => url.endsWith(".js")).map((url) => url.split("/").at(-1));
      expect(files()).toEqual(["index.js"]);
      await page.locator("#items-view .items-list a").nth(3).click();
      await page.waitForSelector("#items-view .items-detail[data-shown]");
      expect(files()).toEqual(["index.js", "p0.js"]);
      expect(await page.locator("#items-view .items-count").innerText()).toMatch(/^(\d+) of \1 items$/);
      expect(errors).toEqual([]);
    } finally {
      large.remove();
    }
  });
});
