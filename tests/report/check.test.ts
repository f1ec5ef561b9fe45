// medbench check over the note-errors roster, built through the CLI against the fake OpenAI-compatible
// server (policies of different strength for the four roster models) plus the four built-in baselines.
// Every number the check reports is recomputed here from the results folders (metrics.json) or by `stats
// paired`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { Project } from "../support/rig.js";
import { REPO } from "../support/helpers.js";
// @ts-expect-error: a plain ESM script, also run by hand
import { noteErrorsPolicy } from "../../scripts/fake-policies/note-errors.mjs";
import { fakeRoute, startFake } from "../support/fake.js";
import { SAMPLE_NOTES } from "../support/note-errors.js";

type Body = { model: string; messages: { role: string; content: string }[] };
type Reply = string | { content?: string; reasoning_content?: string; http_error?: number };
type Policy = (body: Body) => Reply;

const SPEC = "specs/note-errors.yaml";
const RESULTS = "results/syn-snuh-note-errors";
const STRONG = "deepseek/deepseek-v4-pro-1.6t-a49b",
  WEAK = "openai/gpt-oss-20b",
  OTHER = "zhipu/glm-5.3-753b-a40b",
  GENERATOR = "alibaba/qwen3.6-35b-a3b";
const BASELINES = [
  "medbench/note-errors-conjunction-lr",
  "medbench/random",
  "medbench/prior",
  "medbench/constant-yes",
];
/** Quick retries and no stop on failures, as tests/support/fake.ts's routes have them. */
const FAST = {
  concurrency: 8,
  timeout_s: 120,
  retry: { max_attempts: 2, base_ms: 1, max_ms: 5, max_total_s: 300 },
  max_failures_in_a_row: 1000,
};
const dirOf = (model: string) => `${RESULTS}/${model.replace("/", "_")}/neutral-greedy`;

/** The fake's reviewer at a given skill (share of notes judged by its rule, the rest a coin), no quirks. */
const reviewer = (skill: number): Policy => noteErrorsPolicy({ skill, quirks: false });
/** gpt-oss reasons whatever it is asked: every reply carries a reasoning field. */
const reasoning =
  (p: Policy): Policy =>
  (b) => ({ content: p(b) as string, reasoning_content: "low effort reasoning" });
/** A permanent server error on about one request in six (by the body's hash), answers otherwise. */
const failing =
  (p: Policy): Policy =>
  (b) =>
    [...JSON.stringify(b.messages)].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % 6 === 0
      ? { http_error: 500 }
      : p(b);

interface Check {
  status: "pass" | "fail" | "incomplete";
  inputs: string;
  runs: { role: string; model: string; status: string; reason: string | null; tags: string[] }[];
  missing: { role: string; model: string; reason: string }[];
  criteria: { id: string; status: string; summary: string; numbers: Record<string, any> }[];
}

describe("medbench check over the note-errors roster", () => {
  let p: Project;
  let fake: { url: string; close(): Promise<void> };
  // Which policy answers for each served model name; tests change it between builds.
  const serve: Record<string, Policy> = {};
  beforeAll(async () => {
    fake = await startFake({
      policy: (body: Body) => {
        const name = Object.keys(serve).find((m) => m.endsWith(`/${body.model}`) || m === body.model);
        if (!name) return { http_error: 404 };
        return serve[name]!(body);
      },
    });
    p = new Project();
    const route = (name: string) => fakeRoute(name, fake.url);
    // The shipped registry's openai route (its request fields as shipped), pointed at the fake.
    const shipped = parseYaml(readFileSync(`${REPO}/registry/providers.yaml`, "utf8")).routes.openai;
    const openai = stringifyYaml({ routes: { openai: { ...shipped, base_url: fake.url, ...FAST } } });
    p.write("routes.yaml", `routes:\n${["deepseek", "zhipu", "alibaba"].map(route).join("")}`);
    p.write("openai.yaml", openai);
    // An openai route that sends no reasoning field (as the shipped route once did).
    p.write("openai-plain.yaml", `routes:\n${route("openai")}`);
  });
  afterAll(async () => {
    await fake.close();
    p.remove();
  });

  /** `code` 1: a run with failed requests, which builds whole but incomplete. */
  const build = async (model: string, refresh = false, openai = "openai.yaml", code = 0) => {
    const args = ["build", SPEC, "--model", model, "--registry", "routes.yaml", "--registry", openai];
    const r = await p.run(refresh ? [...args, "--refresh", "model"] : args, { OPENAI_API_KEY: "sk-test" });
    expect(r.exitCode, r.stderr).toBe(code);
  };
  const check = async (code: number): Promise<Check> => {
    const r = await p.run(["check", SPEC, "--json"]);
    expect(r.exitCode, r.stderr + r.stdout).toBe(code);
    return JSON.parse(r.stdout) as Check;
  };
  const metricsOf = (model: string) =>
    JSON.parse(p.read(`${dirOf(model)}/metrics.json`)) as {
      metrics: {
        bcr: { value: number; lo: number; hi: number; n: number };
        api_errors: number;
        request: object;
      };
      selection: { items: number };
    };
  const bcr = (model: string) => metricsOf(model).metrics.bcr;
  const criterion = (c: Check, id: string) => c.criteria.find((x) => x.id === id)!;
  /** `medbench stats paired` on the two runs' units files: the same paired code, via the other command. */
  const statsPaired = async (a: string, b: string) => {
    const r = await p.run([
      "stats",
      "paired",
      ...["--a", `${dirOf(a)}/units.jsonl`, "--b", `${dirOf(b)}/units.jsonl`],
      ...["--value", "value", "--id", "id", "--cluster", "cluster"],
      ...["--resamples", "2000", "--seed", "0", "--rng", "numpy"],
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, number>;
  };

  it("says which runs are missing before any is built, and how to build them", async () => {
    const c = await check(1);
    expect(c.status).toBe("incomplete");
    expect(c.inputs).toBeNull();
    expect(c.missing.map((m) => m.model)).toEqual([STRONG, WEAK, OTHER, GENERATOR, ...BASELINES]);
    // A route medbench ships is built as is; one it does not ship is to be added to a registry first.
    expect(c.missing[0]!.reason).toBe(
      `no run: medbench build ${SPEC} --model ${STRONG} --registry routes.yaml, after adding a route ` +
        `\`${STRONG.split("/")[0]}\` to routes.yaml (medbench ships none of that name; ` +
        "`medbench init` writes a routes.yaml to start from)",
    );
    expect(c.missing[1]!.reason).toBe(`no run: medbench build ${SPEC} --model ${WEAK}`);
    expect(new Set(c.criteria.map((x) => x.status))).toEqual(new Set(["incomplete"]));
  });

  it("holds over a roster of a strong and a weak reference, the generator and the baselines", async () => {
    serve[STRONG] = reviewer(0.9);
    serve[WEAK] = reasoning(reviewer(0.2));
    serve[OTHER] = reviewer(0.6);
    serve[GENERATOR] = reviewer(1);
    for (const m of [STRONG, WEAK, OTHER, GENERATOR, ...BASELINES]) await build(m);
    const c = await check(0);
    expect(c.status, JSON.stringify(c.criteria, null, 1)).toBe("pass");
    expect(c.inputs).toBe("sample"); // the bundled synthetic sample, and the runs say so
    expect(c.runs.every((r) => r.tags.includes("synthetic-sample"))).toBe(true);
    expect(c.runs.find((r) => r.role === "weak_reference")!.tags).toContain("reasoning-on");

    // beats_prior: each lower bound above the prior, as metrics.json records it.
    const beats = criterion(c, "beats_prior");
    for (const [role, model] of [
      ["weak_reference", WEAK],
      ["conjunction_lr", BASELINES[0]!],
    ] as const) {
      expect(beats.numbers.runs[role]).toMatchObject({ lo: bcr(model).lo, holds: true });
      expect(bcr(model).lo).toBeGreaterThan(0.25);
    }
    const random = bcr("medbench/random");
    expect(criterion(c, "random_covers_prior").numbers.runs.random).toMatchObject({
      lo: random.lo,
      hi: random.hi,
      holds: random.lo <= 0.25 && 0.25 <= random.hi,
    });

    // separation: the intervals, and the paired bootstrap exactly as `stats paired` computes it.
    const sep = criterion(c, "separation");
    expect(bcr(STRONG).lo).toBeGreaterThan(bcr(WEAK).hi);
    expect(sep.numbers.above).toMatchObject({ value: bcr(STRONG).value, lo: bcr(STRONG).lo });
    expect(sep.numbers.below).toMatchObject({ value: bcr(WEAK).value, hi: bcr(WEAK).hi });
    const paired = await statsPaired(STRONG, WEAK);
    expect(sep.numbers.paired).toMatchObject({
      diff_pp: paired.diff_pp,
      lo: paired.lo,
      hi: paired.hi,
      mcnemar_p: paired.mcnemar_p,
      resamples: 2000,
      rng: "numpy",
    });
    expect(paired.diff_pp).toBeCloseTo(100 * (bcr(STRONG).value - bcr(WEAK).value), 9);

    // The weak reference ran at reasoning effort low through the shipped openai route.
    expect(metricsOf(WEAK).metrics.request).toMatchObject({ reasoning_effort: "low" });

    // headroom: the best reference (the generator answers every note by the rule; baselines are not
    // references), and the best model that is not Qwen.
    const head = criterion(c, "headroom");
    const references = [STRONG, WEAK, OTHER];
    const best = references.reduce((b, m) => (bcr(m).value > bcr(b).value ? m : b));
    expect(bcr(GENERATOR).value).toBeGreaterThan(bcr(best).value);
    expect(head.numbers.among).toEqual(["strong_reference", "weak_reference", "other_reference"]);
    expect(head.numbers.best).toMatchObject({ model: best, value: bcr(best).value });
    expect(head.numbers.also_best).toMatchObject({ model: best, value: bcr(best).value });
    for (const C of [1, 0.951]) {
      const row = head.numbers.ceilings.find((x: { ceiling: number }) => x.ceiling === C);
      expect(row.headroom).toBeCloseTo((C - bcr(best).value) / (C - 0.25), 12);
      expect(row.holds).toBe(row.headroom >= 0.05 && bcr(best).hi < C);
    }

    // format: no parse failures (no quirks), no API errors; thinking: the weak reference excepted.
    const format = criterion(c, "format");
    expect(Object.keys(format.numbers.runs)).toHaveLength(8);
    expect(format.numbers.runs.strong_reference).toMatchObject({ parse_failures: 0, api_errors: 0 });
    const thinking = criterion(c, "thinking");
    expect(thinking.numbers.runs.weak_reference).toMatchObject({ value: false, exception: true });
    expect(thinking.numbers.runs.strong_reference).toMatchObject({ value: true, holds: true });

    // The text table says the same.
    const text = await p.run(["check", SPEC]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/separation\s+pass\s+strong_reference/);
    expect(text.stdout).toMatch(/SYNTHETIC sample/);
    expect(text.stdout.trim().split("\n").pop()).toBe("check holds");
  });

  it("fails separation when the weak reference is as strong as the strong one", async () => {
    serve[WEAK] = reasoning(reviewer(0.9));
    await build(WEAK, true);
    const c = await check(1);
    expect(c.status).toBe("fail");
    const sep = criterion(c, "separation");
    expect(sep.status).toBe("fail");
    expect(bcr(STRONG).lo).toBeLessThanOrEqual(bcr(WEAK).hi);
    expect(sep.numbers.paired.diff_pp).toBe((await statsPaired(STRONG, WEAK)).diff_pp);
    expect(criterion(c, "beats_prior").status).toBe("pass");
  });

  it("fails headroom when a reference answers every pair right", async () => {
    serve[WEAK] = reasoning(reviewer(0.2));
    serve[STRONG] = reviewer(1);
    await build(WEAK, true);
    await build(STRONG, true);
    const c = await check(1);
    const head = criterion(c, "headroom");
    expect(head.status).toBe("fail");
    expect(head.numbers.best).toMatchObject({ model: STRONG, value: bcr(STRONG).value });
    const at1 = head.numbers.ceilings.find((x: { ceiling: number }) => x.ceiling === 1);
    expect(at1.headroom).toBeCloseTo((1 - bcr(STRONG).value) / 0.75, 12);
    expect(at1.headroom).toBeLessThan(0.05);
    expect(criterion(c, "separation").status).toBe("pass");
  });

  it("is incomplete with a run missing and a run with API errors, and says why", async () => {
    serve[STRONG] = reviewer(0.9);
    serve[WEAK] = failing(reasoning(reviewer(0.2)));
    await build(STRONG, true);
    await build(WEAK, true, "openai.yaml", 1);
    rmSync(p.path(dirOf(OTHER)), { recursive: true });
    const m = metricsOf(WEAK);
    const rate = m.metrics.api_errors / m.selection.items;
    expect(rate).toBeGreaterThanOrEqual(0.1);
    const c = await check(1);
    expect(c.status).toBe("incomplete");
    expect(c.missing.map((x) => x.role).sort()).toEqual(["other_reference", "weak_reference"]);
    const weak = c.runs.find((r) => r.role === "weak_reference")!;
    expect(weak.status).toBe("incomplete");
    expect(weak.reason).toContain(`API errors ${(100 * rate).toFixed(1)} % of the requests`);
    expect(c.runs.find((r) => r.role === "other_reference")!.reason).toMatch(/^no run: medbench build/);
    for (const id of ["beats_prior", "separation", "headroom", "format", "thinking"])
      expect(criterion(c, id).status, id).toBe("incomplete");
    expect(criterion(c, "random_covers_prior").status).toBe("pass");
  });

  it("does not pass with a weak reference that ran without reasoning effort low, and names it", async () => {
    serve[WEAK] = reasoning(reviewer(0.2));
    await build(OTHER);
    await build(WEAK, false, "openai-plain.yaml");
    expect(metricsOf(WEAK).metrics.request).not.toHaveProperty("reasoning_effort");
    const c = await check(1);
    expect(c.status).toBe("incomplete");
    const weak = c.runs.find((r) => r.role === "weak_reference")!;
    expect(weak.status).toBe("incomplete");
    expect(weak.reason).toContain(`${dirOf(WEAK)}: its recorded request sends no reasoning effort`);
    expect(weak.reason).toMatch(/needs reasoning effort low/);
    expect(c.missing.map((m) => m.role)).toEqual(["weak_reference"]);
    for (const id of ["beats_prior", "separation"]) {
      expect(criterion(c, id).status, id).toBe("incomplete");
      // The reason is the roster's to say, once; the criterion points there.
      expect(criterion(c, id).summary).toBe("no usable run of weak_reference (incomplete): see the roster");
    }
    // Built again through the shipped route, it holds.
    await build(WEAK);
    expect((await check(0)).status).toBe("pass");
  });

  it("judges a --configurations all run on its headline: failures elsewhere do not count", async () => {
    // Every sampled request (temperature 0.7) fails for good; the headline (greedy) is answered.
    const plain = reviewer(0.6);
    serve[OTHER] = (b) =>
      (b as unknown as { temperature: number }).temperature > 0 ? { http_error: 500 } : plain(b);
    const r = await p.run(
      ["build", SPEC, "--model", OTHER, "--registry", "routes.yaml", "--configurations", "all"],
      { OPENAI_API_KEY: "sk-test" },
    );
    // Incomplete (exit 1): the sampled configurations' requests all failed.
    expect(r.exitCode, r.stderr).toBe(1);
    const all = `${RESULTS}/${OTHER.replace("/", "_")}/all`;
    const m = JSON.parse(p.read(`${all}/metrics.json`));
    expect(m.all_configurations.api_errors).toBe(2 * SAMPLE_NOTES);
    expect(m.metrics.api_errors).toBe(0);
    // Only the --configurations all run of this model: the check reads its headline.
    rmSync(p.path(dirOf(OTHER)), { recursive: true });
    const c = await check(0);
    const other = c.runs.find((x) => x.role === "other_reference")!;
    expect(other).toMatchObject({ status: "ok", dir: all });
    expect(criterion(c, "format").numbers.runs.other_reference.api_errors).toBe(0);
  });

  it("counts no reference that reasoned behind a bare </think>; says which run completes it", async () => {
    const plain = reviewer(0.9);
    serve[STRONG] = (b) => `The template opened the block.\n</think>\n${plain(b) as string}`;
    await build(STRONG, true);
    const audit = (metricsOf(STRONG).metrics as unknown as { thinking_audit: Record<string, unknown> })
      .thinking_audit;
    expect(audit).toMatchObject({ replies_with_think_block: SAMPLE_NOTES, thinking_off: false });
    const c = await check(1);
    expect(c.status).toBe("incomplete");
    const strong = c.runs.find((r) => r.role === "strong_reference")!;
    expect(strong.status).toBe("incomplete");
    expect(strong.reason).toContain(
      `reasoning-on: 0 replies with a reasoning field and ${SAMPLE_NOTES} with a think tag ` +
        "(metrics.thinking_audit)",
    );
    expect(strong.reason).toMatch(/a run whose thinking audit holds completes the check/);
    expect(strong.tags).toContain("reasoning-on");
    for (const id of ["separation", "headroom", "thinking"])
      expect(criterion(c, id).status, id).toBe("incomplete");
  });

  it("refuses a spec without a check, and a check naming no roster entry (file:line:column)", async () => {
    const r = await p.run(["check", "specs/voice-command.yaml"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/declares no check/);
    const err = await p.refuses(
      (t) => t.replace("runs: [weak_reference, conjunction_lr]", "runs: [weak_ref]"),
      {
        file: SPEC,
        args: ["check", SPEC],
      },
    );
    expect(err).toMatch(/specs\/note-errors\.yaml:\d+:\d+/);
    expect(err).toMatch(/no roster entry "weak_ref"/);
  });
});
