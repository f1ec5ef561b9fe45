// The model stage against a fake OpenAI-compatible server over real HTTP: what is sent, faults survived,
// format fallback, the thinking audit, secrets kept out of every file, and a killed build resumed.
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { rmSync } from "node:fs";
import { Project, BIN, cleanedAfterEach } from "../support/rig.js";
import { startFake, type Fake } from "../support/fake.js";
import { VOICE_SAMPLE_ITEMS } from "../support/helpers.js";

const { servers, projects } = cleanedAfterEach();

const THINKING_OFF =
  "    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n";

// A healthy request never meets the 120 s limit on a loaded machine; the hang test sets a short one.
async function setup(
  server: Record<string, unknown> = {},
  route: string = THINKING_OFF,
  concurrency = 4,
  timeoutS = 120,
) {
  const fake: Fake = await startFake(server);
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write(
    "routes.yaml",
    `routes:
  fake:
    base_url: ${fake.url}
    concurrency: ${concurrency}
    timeout_s: ${timeoutS}
    retry: { max_attempts: 4, base_ms: 5, max_ms: 50, max_total_s: 300 }
${route}`,
  );
  return { fake, p };
}

const build = (p: Project, args: string[] = [], env: Record<string, string> = {}) =>
  p.buildAgainstFake(args, env);
const metrics = (p: Project) =>
  JSON.parse(p.read("results/kor-surgical-robot-voice-command/fake_test-model/metrics.json"));
const items = (p: Project) =>
  p
    .read("results/kor-surgical-robot-voice-command/fake_test-model/items.jsonl")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("requests", () => {
  it("records in metrics.request exactly the fields sent, explicit 0 and false included", async () => {
    const { fake, p } = await setup();
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(0);
    const sent = fake.stats.received[0]!.body;
    expect(sent.temperature).toBe(0);
    expect(sent.max_tokens).toBe(800);
    expect(sent.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(sent.response_format.type).toBe("json_schema");
    expect(sent.response_format.json_schema.strict).toBe(true);
    const m = metrics(p);
    const { messages, ...fields } = sent;
    expect({ ...m.metrics.request, messages: undefined }).toEqual({ ...fields, messages: undefined });
    expect(m.metrics.request.messages).toBe("per item: 2 messages (system, user)");
    expect(m.metrics.response_format).toEqual({ json_schema: VOICE_SAMPLE_ITEMS });
    expect(m.metrics.thinking_audit).toEqual({
      replies_with_reasoning_field: 0,
      replies_with_think_block: 0,
      thinking_off: true,
    });
    expect(m.metrics.exact_match.value).toBeGreaterThan(0);
    expect(m.metrics.exact_match.value).toBeLessThan(1);
    expect(messages[0].role).toBe("system");
  });

  it("never re-sends a cached request; --refresh model does", async () => {
    const { fake, p } = await setup();
    expect((await build(p)).exitCode).toBe(0);
    const sent = fake.stats.requests;
    // Forget every stage: only the per-request replies remain.
    rmSync(p.path("cache/stages"), { recursive: true });
    const again = await build(p);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(
      JSON.parse(again.stdout.trim().split("\n").pop()!).stages.find(
        (s: { name: string }) => s.name === "model",
      ).status,
    ).toBe("ran");
    expect(fake.stats.requests).toBe(sent);
    expect((await build(p, ["--refresh", "model"])).exitCode).toBe(0);
    expect(fake.stats.requests).toBe(2 * sent);
  });

  it("applies per-model overrides instead of the route's thinking-off fields and records them", async () => {
    const { fake, p } = await setup(
      {},
      "    request:\n" +
        "      thinking_off: { chat_template_kwargs: { enable_thinking: false }, thinking_budget: 0 }\n",
    );
    p.edit("specs/voice-command.yaml", (t) =>
      t.replace(
        '      thinking: "off"\n',
        '      thinking: "off"\n      overrides:\n        fake/test-model:\n' +
          '          assistant_prefill: "<think></think>\\n"\n' +
          "          fields: { add_generation_prompt: false, continue_final_message: true, " +
          "chat_template_kwargs: { enable_thinking: false } }\n",
      ),
    );
    expect((await build(p)).exitCode).toBe(0);
    const sent = fake.stats.received[0]!.body;
    expect(sent.messages.at(-1)).toEqual({ role: "assistant", content: "<think></think>\n" });
    expect(sent.add_generation_prompt).toBe(false);
    expect(sent.continue_final_message).toBe(true);
    expect(sent.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(sent).not.toHaveProperty("thinking_budget"); // the route's thinking-off fields are replaced
    const m = JSON.parse(p.read("results/kor-surgical-robot-voice-command/fake_test-model/metrics.json"));
    expect(m.metrics.request.add_generation_prompt).toBe(false);
    expect(m.metrics.request).not.toHaveProperty("thinking_budget");
  });

  it("refuses a route that does not say how to switch thinking off", async () => {
    const { p } = await setup({}, "    request: {}\n");
    const r = await build(p);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/route fake does not declare how to switch thinking off/);
    expect(r.stderr).toMatch(/add request\.thinking_off to route fake/);
  });

  it("gives gpt-oss models the route's lowest reasoning effort", async () => {
    const { fake, p } = await setup(
      {},
      "    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n" +
        "      reasoning_low: { reasoning_effort: low }\n      reasoning_low_models: [gpt-oss]\n",
    );
    const r = await p.run([
      "build",
      "specs/voice-command.yaml",
      "--model",
      "fake/gpt-oss-120b",
      "--registry",
      "routes.yaml",
      "--limit",
      "1",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.received[0]!.body.reasoning_effort).toBe("low");
    expect(fake.stats.received[0]!.body.chat_template_kwargs).toBeUndefined();
  });
});

describe("faults", () => {
  it("survives 429 (honouring Retry-After), 500, 503, resets, hangs and malformed bodies", async () => {
    const { fake, p } = await setup(
      {
        faults: { 429: 11, 500: 13, 503: 17, reset: 19, hang: 23, malformed: 7 },
        retryAfter: 1,
        hangMs: 3000,
      },
      THINKING_OFF,
      4,
      1,
    );
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(Object.keys(fake.stats.faults).sort()).toEqual([
      "429",
      "500",
      "503",
      "hang",
      "malformed",
      "reset",
    ]);
    const m = metrics(p);
    expect(m.metrics.api_errors).toBe(0);
    expect(m.incomplete).toBe(false);
    // The retry after a 429 came no sooner than its Retry-After.
    const limited = fake.stats.received.filter((x) => x.fault === "429");
    expect(limited.length).toBeGreaterThan(0);
    for (const first of limited) {
      const retry = fake.stats.received.find(
        (x) => x !== first && x.at >= first.at && JSON.stringify(x.body) === JSON.stringify(first.body),
      );
      expect(retry).toBeDefined();
      expect(retry!.at - first.at).toBeGreaterThanOrEqual(1000);
    }
  });

  it("records a final failure as an API error on its item; a run with any is incomplete", async () => {
    const { p } = await setup({ faults: { 500: 5 }, faultAttempts: 99 });
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: some requests failed
    expect(r.stderr).toMatch(/requests failed \(API errors; no verdict for those items\)/);
    const m = metrics(p);
    expect(m.metrics.api_errors).toBeGreaterThan(0);
    expect(m.incomplete).toBe(true);
    const errored = items(p).filter((i) => i.verdicts.api_error);
    expect(errored.length).toBe(m.metrics.api_errors);
    expect(m.metrics.exact_match.n).toBe(42 - errored.filter((i) => i.meta.subset === "clean").length);
  });

  it("keeps a truncated reply (finish_reason length) as a wrong answer", async () => {
    const { p } = await setup({ faults: { length: 7 } });
    expect((await build(p)).exitCode).toBe(0);
    const m = metrics(p);
    expect(m.metrics.truncated).toBeGreaterThan(0);
    // Half a JSON object is never a valid command: every truncated reply is a parse failure.
    expect(m.tables.parse_failures).toBeGreaterThanOrEqual(m.metrics.truncated);
  });

  it("falls back from a refused JSON schema to JSON mode, where later items start after two", async () => {
    const { fake, p } = await setup({ refuseSchema: true }, THINKING_OFF, 1);
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.faults["refuse-schema"]).toBe(2);
    expect(metrics(p).metrics.response_format).toEqual({ json_object: VOICE_SAMPLE_ITEMS });
  });
});

describe("thinking audit", () => {
  it.each([
    ["field", "replies_with_reasoning_field"],
    ["think", "replies_with_think_block"],
  ])("counts replies with a %s", async (mode, counter) => {
    const { p } = await setup({ reasoning: mode });
    expect((await build(p)).exitCode).toBe(0);
    const audit = metrics(p).metrics.thinking_audit;
    expect(audit[counter]).toBe(VOICE_SAMPLE_ITEMS);
    expect(audit.thinking_off).toBe(false);
  });
});

describe("secrets", () => {
  it("sends the key from the route's variable and writes it nowhere", async () => {
    const KEY = "sk-medbench-test-PLANTED-0123456789abcdef";
    const { fake, p } = await setup({}, "    api_key_env: FAKE_API_KEY\n" + THINKING_OFF);
    const missing = await build(p);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/needs an API key in \$FAKE_API_KEY/);
    const r = await build(p, [], { FAKE_API_KEY: KEY });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(fake.stats.received[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    const exported = await p.run([
      "export",
      "results/kor-surgical-robot-voice-command/fake_test-model",
      "-o",
      "bundle.tar.gz",
    ]);
    expect(exported.exitCode, exported.stderr).toBe(0);
    await execa("mkdir", ["unpacked"], { cwd: p.dir });
    await execa("tar", ["xzf", "bundle.tar.gz", "-C", "unpacked"], { cwd: p.dir });
    const grep = await execa("grep", ["-rl", KEY, "cache", "results", "medbench.lock", "unpacked"], {
      cwd: p.dir,
      reject: false,
    });
    expect(grep.stdout).toBe("");
    expect(grep.exitCode).toBe(1); // grep found nothing
  });
});

describe("a killed build", () => {
  it("resumes without re-sending the replies it already had", async () => {
    // The server answers 30 requests, then accepts and never answers: the build cannot finish before the
    // kill, however slow this machine is.
    const { fake, p } = await setup({ latencyMs: 40, deadAfter: 30 }, THINKING_OFF, 2);
    const child = execa(
      "node",
      [BIN, "build", "specs/voice-command.yaml", "--model", "fake/test-model", "--registry", "routes.yaml"],
      { cwd: p.dir, reject: false, detached: true },
    );
    let exited = false;
    void child.then(() => {
      exited = true;
    });
    while (fake.stats.answered.size < 30 && !exited) await new Promise((r) => setTimeout(r, 20));
    expect(exited).toBe(false);
    process.kill(-child.pid!, "SIGKILL");
    await child;
    fake.set({ deadAfter: null });
    const before = fake.stats.requests;
    const r = await build(p);
    expect(r.exitCode, r.stderr).toBe(0);
    // Only the requests in flight at the kill (at most the route's concurrency) were sent twice.
    const twice = [...fake.stats.bodies.values()].filter((n) => n > 1).length;
    expect(twice).toBeLessThanOrEqual(2);
    expect(fake.stats.requests - before).toBe(fake.stats.bodies.size - (before - twice));
    expect(metrics(p).metrics.api_errors).toBe(0);
  });
});
