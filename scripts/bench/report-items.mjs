// The report's item view on a large run, in Debian's chromium from file://: how long the item list takes to
// open (against opening the report page itself, timed in the same browser), and how much memory the
// browser holds then (the page's JS heap, and the proportional memory of chromium's processes).
//   node scripts/bench/report-items.mjs [--items 100000] [--chromium /usr/bin/chromium]
import { $, fs, path, os, argv } from "zx";
import { chromium } from "playwright-core";
import { syntheticProject } from "./release.mjs";

const items = Number(argv.items ?? 100000);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
$.verbose = false;

/** Proportional set size (MB: shared pages split between their sharers) of this process's descendants,
 *  all of them and the renderers alone (chromium runs as this process's children). */
function chromiumPss() {
  const children = (id) => {
    try {
      return fs.readFileSync(`/proc/${id}/task/${id}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    } catch {
      return [];
    }
  };
  const read = (file) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const out = { all: 0, renderer: 0 };
  for (const stack = children(process.pid); stack.length; ) {
    const id = stack.pop();
    const pss = Number(read(`/proc/${id}/smaps_rollup`).match(/^Pss:\s+(\d+) kB/m)?.[1] ?? 0) / 1024;
    out.all += pss;
    if (read(`/proc/${id}/cmdline`).includes("--type=renderer")) out.renderer += pss;
    stack.push(...children(id));
  }
  return out;
}

const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-report-items-"));
try {
  const { dir, items: made } = await syntheticProject(items, work);
  const started = Date.now();
  await $({
    cwd: dir,
  })`node ${bin} build specs/voice-command.yaml --model medbench/keyword-stop --data-dir release`;
  const built = Date.now();
  await $({ cwd: dir })`node ${bin} report specs/voice-command.yaml -o report.html`;
  const reported = Date.now();
  const folder = (await fs.readdir(path.join(dir, "report.items"))).find((x) => !x.startsWith("."));
  const index = await fs.stat(path.join(dir, "report.items", folder, "index.js"));
  const executablePath = String(argv.chromium ?? "/usr/bin/chromium");
  const browser = await chromium.launch({ executablePath, args: ["--headless", "--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const loaded = [];
    page.on("request", (request) => loaded.push(path.basename(request.url())));
    let t0 = performance.now();
    await page.goto(`file://${path.join(dir, "report.html")}`);
    await page.waitForSelector("body[data-items=true]");
    const pageMs = performance.now() - t0;
    const before = chromiumPss();
    t0 = performance.now();
    await page.locator("a.items-link").first().click();
    await page.waitForSelector("#items-view[data-ready=true] .items-list li");
    const listMs = performance.now() - t0;
    t0 = performance.now();
    await page.locator("#items-view .items-list a").nth(5).click();
    await page.waitForSelector("#items-view .items-detail[data-shown]");
    const itemMs = performance.now() - t0;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const metrics = Object.fromEntries(
      (await cdp.send("Performance.getMetrics")).metrics.map((metric) => [metric.name, metric.value]),
    );
    const after = chromiumPss();
    console.log(
      `items: ${made} (build ${((built - started) / 1000).toFixed(1)} s,` +
        ` report ${((reported - built) / 1000).toFixed(1)} s, index.js ${(index.size / 1e6).toFixed(1)} MB)`,
    );
    console.log(`report page open: ${pageMs.toFixed(0)} ms (baseline)`);
    console.log(`item list open:   ${listMs.toFixed(0)} ms (${(listMs / pageMs).toFixed(2)}× the page)`);
    console.log(`an item opened:   ${itemMs.toFixed(0)} ms (${(itemMs / pageMs).toFixed(2)}× the page)`);
    console.log(
      `JS heap used: ${(metrics.JSHeapUsedSize / 1e6).toFixed(1)} MB,` +
        ` total ${(metrics.JSHeapTotalSize / 1e6).toFixed(1)} MB; DOM nodes ${metrics.Nodes}`,
    );
    console.log(
      `chromium PSS, renderers: ${after.renderer.toFixed(0)} MB with the list open,` +
        ` ${before.renderer.toFixed(0)} MB with the page alone ` +
        `(${(after.renderer / before.renderer).toFixed(2)}×)`,
    );
    console.log(
      `chromium PSS, all processes: ${after.all.toFixed(0)} MB (page alone ${before.all.toFixed(0)} MB)`,
    );
    console.log(`files loaded: ${loaded.join(", ")}`);
  } finally {
    await browser.close();
  }
} finally {
  await fs.remove(work);
}
