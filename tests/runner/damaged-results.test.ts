// Damaged results and cache objects: a truncated metrics.json read by report or compare is
// refused naming the file (exit 2, no stack trace); a results folder whose metrics.json is `{}` is listed by
// the report as a broken run and the rest is rendered (in a real browser); a cache object damaged with its
// mtime put back is seen (its ctime moved) and recomputed (a runner matter: on the fixture task).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { execa } from "execa";
import { Project, SUMS_SPECS, expectCleanFailure } from "../support/rig.js";
import { launchChromium } from "../support/browser.js";

const TASK = "results/kor-surgical-robot-voice-command";
const PRIOR = `${TASK}/medbench_prior`;
const STOP = `${TASK}/medbench_keyword-stop`;
const FIXTURE = "specs/sums.yaml";
const CALCULATOR = "results/fixture-sums/medbench_calculator";

describe("damaged results (14.12)", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    await p.build(["--model", "medbench/keyword-stop"]);
  });
  afterAll(() => p?.remove());

  /** Runs `f` with a results file replaced by `text`, then puts it back. */
  async function withFile<T>(file: string, text: string, f: () => Promise<T>): Promise<T> {
    const before = p.read(file);
    p.write(file, text);
    try {
      return await f();
    } finally {
      p.write(file, before);
    }
  }

  it("a truncated metrics.json: report and compare refuse, naming the file", async () => {
    const whole = p.read(`${PRIOR}/metrics.json`);
    await withFile(`${PRIOR}/metrics.json`, whole.slice(0, Math.floor(whole.length / 2)), async () => {
      const r = await p.run(["report", "-o", "r.html"]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(
        /error: results\/kor-surgical-robot-voice-command\/medbench_prior\/metrics\.json is not valid JSON/,
      );
      expectCleanFailure(r.stderr);
      expect(p.exists("r.html")).toBe(false);
      const c = await p.run(["compare-voice-command", PRIOR, STOP]);
      expect(c.exitCode).toBe(2);
      expect(c.stderr).toContain(`${PRIOR}/metrics.json is not valid JSON`);
      expectCleanFailure(c.stderr);
    });
  });

  it("a truncated items.jsonl: compare refuses, naming the file and line", async () => {
    const whole = p.read(`${STOP}/items.jsonl`);
    const lines = whole.split("\n");
    const cut = [...lines.slice(0, 3), lines[3]!.slice(0, 20)].join("\n");
    await withFile(`${STOP}/items.jsonl`, cut, async () => {
      const c = await p.run(["compare-voice-command", PRIOR, STOP]);
      expect(c.exitCode).toBe(2);
      expect(c.stderr).toContain(`${STOP}/items.jsonl:4 is not valid JSON`);
      expectCleanFailure(c.stderr);
    });
  });

  it("compare refuses a metrics.json of {} as not a run's result", async () => {
    await withFile(`${STOP}/metrics.json`, "{}\n", async () => {
      const c = await p.run(["compare-voice-command", PRIOR, STOP]);
      expect(c.exitCode).toBe(2);
      expect(c.stderr).toContain(`${STOP}/metrics.json is not a run's result (metrics.json has no slug`);
      expectCleanFailure(c.stderr);
    });
  });

  it("report lists a run whose metrics.json is {} as broken and renders the rest", async () => {
    await withFile(`${STOP}/metrics.json`, "{}\n", async () => {
      const r = await p.run(["report", "specs/voice-command.yaml", "-o", "r.html"]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/1 runs of 1 tasks/);
      expect(r.stderr).toContain(`warning: broken run, listed as such: ${STOP}: metrics.json has no slug`);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(String(e)));
        await page.goto(`file://${p.path("r.html")}`);
        await page.waitForSelector("body[data-rendered=true]");
        expect(errors).toEqual([]);
        const section = page.locator('section[data-slug="kor-surgical-robot-voice-command"]');
        const text = await section.innerText();
        expect(text).toContain("Broken runs");
        expect(text).toContain(STOP);
        // The other run is rendered whole: its row, its charts, its audit.
        expect(text).toMatch(/medbench\/prior \(synthetic sample[^)]*\)\s+exact_match [\d.]+%/);
        expect(await section.locator("canvas").count()).toBeGreaterThan(0);
        expect(await section.locator("details").count()).toBe(1);
      } finally {
        await browser.close();
      }
    });
  });
});

describe("a damaged cache object (14.12), on the fixture task", () => {
  let p: Project;
  beforeAll(async () => {
    p = new Project(SUMS_SPECS);
    await p.buildSpec(FIXTURE);
  });
  afterAll(() => p?.remove());

  it("a cache object damaged with its mtime put back is seen and recomputed", async () => {
    const lock = JSON.parse(p.read("medbench.lock"));
    const [build] = Object.values(lock.specs[FIXTURE].builds) as {
      stages: Record<string, { outputs: Record<string, string> }>;
    }[];
    const hash = build!.stages.score!.outputs.items!;
    const object = p.path("cache/objects", hash.slice(0, 2), hash);
    const results = p.read(`${CALCULATOR}/items.jsonl`);
    const bytes = readFileSync(object);
    const at = bytes.indexOf("true");
    expect(at).toBeGreaterThan(0);
    const before = statSync(object, { bigint: true });
    const ref = p.path("mtime-ref");
    await execa("cp", ["-p", object, ref]); // keeps the mtime to the nanosecond
    bytes.write("fals", at); // the same size, another verdict
    writeFileSync(object, bytes);
    await execa("touch", ["-r", ref, object]);
    const after = statSync(object, { bigint: true });
    expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);

    const again = await p.buildSpec(FIXTURE);
    expect(again.status.score).toBe("ran");
    expect(again.status.bootstrap).toBe("fresh"); // the recomputed items are the same bytes
    expect(readFileSync(object).toString("utf8")).toBe(results);
    expect(p.read(`${CALCULATOR}/items.jsonl`)).toBe(results);
  });
});
