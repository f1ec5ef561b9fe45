// Tokens and cost: a run's token totals (metrics.json `tokens`) against the usage the fake server sent, its
// cost against a computation by hand at the registry's price, `status`'s estimate against the bodies the
// build then sends, and `--max-cost` refusing a build over its estimate and stopping one whose spend
// reaches the limit (the replies received kept, the next build sending only the rest).
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";
import { sortedJson } from "../../src/util/json.js";
import { dollars } from "../../src/model/price.js";

const { servers, projects } = cleanedAfterEach();
const DIR = "results/kor-surgical-robot-voice-command/fake_test-model";
const PRICE = { input: 2.5, output: 10, cached_input: 1.25 };

async function project(server: Record<string, unknown> = {}): Promise<{ fake: Fake; p: Project }> {
  const fake = await startFake({ usage: "counted", ...server });
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  const price =
    `    price:\n      "test-*": ` +
    `{ input: ${PRICE.input}, output: ${PRICE.output}, cached_input: 1.25 }\n`;
  p.write("routes.yaml", `routes:\n${fakeRoute("fake", fake.url)}${price}`);
  return { fake, p };
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** The usage of each request answered, from the results' reply records (one per request key). */
function usages(p: Project): Usage[] {
  const byKey = new Map<string, Usage>();
  for (const line of p.read(`${DIR}/replies.jsonl`).trim().split("\n")) {
    const reply = JSON.parse(line) as { request_sha256: string; error: string | null; usage: Usage };
    if (reply.error === null) byKey.set(reply.request_sha256, reply.usage);
  }
  return [...byKey.values()];
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** `status` of the test model over the test routes, and the model stage's estimate in its JSON. */
const STATUS = Project.fakeStatusArgs();
const modelEstimate = (stdout: string) =>
  JSON.parse(stdout).stages.find((stage: { kind: string }) => stage.kind === "model").estimate[
    "fake/test-model"
  ];

describe("tokens and cost", () => {
  it("totals the replies' usage and prices it as a hand computation does", async () => {
    const { p } = await project();
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    const metrics = JSON.parse(p.read(`${DIR}/metrics.json`));
    const used = usages(p);
    const want = {
      prompt: sum(used.map((u) => u.prompt_tokens)),
      completion: sum(used.map((u) => u.completion_tokens)),
      reasoning: sum(used.map((u) => u.completion_tokens_details.reasoning_tokens)),
      cached: sum(used.map((u) => u.prompt_tokens_details.cached_tokens)),
    };
    expect(want.cached).toBeGreaterThan(0);
    expect(metrics.metrics.tokens).toEqual(want);
    const usd =
      ((want.prompt - want.cached) * PRICE.input +
        want.cached * PRICE.cached_input +
        want.completion * PRICE.output) /
      1e6;
    expect(r.stderr).toContain(`cost ${dollars(usd)} at the registry's prices`);
    const compared = await p.run(["compare", DIR, DIR, "--registry", "routes.yaml", "--json"]);
    expect(compared.exitCode, compared.stderr).toBe(0);
    const result = JSON.parse(compared.stdout.trim().split("\n").pop()!);
    expect(result.a.cost_usd).toBeCloseTo(usd, 12);
    const shown = await p.run(["compare", DIR, DIR, "--registry", "routes.yaml"]);
    expect(shown.stdout).toContain(`cost ${dollars(usd)}`);
  });

  it("refuses a bad price at its file:line:column", async () => {
    const { p } = await project();
    p.edit("routes.yaml", (text) => text.replace("output: 10,", "output: -10,"));
    const r = await p.run(
      ["build", "specs/voice-command.yaml", "--model", "fake/test-model"].concat([
        "--registry",
        "routes.yaml",
      ]),
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/routes\.yaml:\d+:\d+:.*output/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("status estimates what the build then sends; --max-cost refuses a build over it", async () => {
    const { fake, p } = await project();
    // A limit below any estimate: the prompts are built, the model stage refused before it sends.
    const refused = await p.buildAgainstFake(["--max-cost", "0.000001"]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/--max-cost: refused to send \d+ requests, .* to fake\/test-model/);
    expect(fake.stats.requests).toBe(0);
    const status = await p.run([...STATUS, "--json"]);
    expect(status.exitCode, status.stderr).toBe(0);
    const estimate = modelEstimate(status.stdout);
    const human = await p.run(STATUS);
    expect(human.stdout).toContain(`would send fake/test-model: ${estimate.requests} requests`);
    const built = await p.buildAgainstFake();
    expect(built.exitCode, built.stderr).toBe(0);
    const bodies = [...new Map(fake.stats.received.map((x) => [sortedJson(x.body)!, x.body])).values()];
    expect(estimate.requests).toBe(bodies.length);
    const input = sum(bodies.map((body) => Math.ceil(Buffer.byteLength(sortedJson(body)!) / 4)));
    expect(estimate.input_tokens).toBe(input);
    expect(estimate.output_tokens).toBe(sum(bodies.map((body) => body.max_tokens)));
    const usd = (input * PRICE.input + estimate.output_tokens * PRICE.output) / 1e6;
    expect(estimate.cost_usd).toBeCloseTo(usd, 12);
  });

  it("--max-cost stops a build whose spend reaches it, keeping the replies received", async () => {
    // The server counts far more tokens than the estimate (bytes / 4, max_tokens) allows for.
    const { fake, p } = await project({ usageScale: 50 });
    const warm = await p.buildAgainstFake(["--max-cost", "0"]); // builds the prompts, sends nothing
    expect(warm.exitCode).toBe(1);
    expect(fake.stats.requests).toBe(0);
    const json = await p.run([...STATUS, "--json"]);
    const { cost_usd: estimated, requests: total } = modelEstimate(json.stdout);
    const stopped = await p.buildAgainstFake(["--max-cost", String(estimated * 1.01)]);
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stderr).toContain("the build's spending reached --max-cost");
    const answered = fake.stats.replies;
    expect(answered).toBeGreaterThan(0);
    expect(answered).toBeLessThan(total);
    const before = fake.stats.requests;
    const rest = await p.buildAgainstFake();
    expect(rest.exitCode, rest.stderr).toBe(0);
    // The replies the stopped build stored were kept: the next build sent fewer than all (a reply in flight
    // when the build stopped was not stored, and is sent again).
    const sentAgain = fake.stats.requests - before;
    expect(sentAgain).toBeLessThan(total);
    expect(sentAgain).toBeGreaterThanOrEqual(total - answered);
  });
});
