// spec.request.thinking: "a per-model override replaces [the route's thinking-off fields] after validation
// on train notes". A build of a model with an override (spec.request.overrides: GLM-5.3) also sends the
// first 4 train pairs as its run is sent, and metrics.json records whether thinking was off and every pair
// parsed; the check reads it (criteria override_thinking_off, override_parses). Against the fake
// OpenAI-compatible server over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Project } from "../support/rig.js";
// @ts-expect-error: a plain ESM script, also run by hand
import { noteErrorsPolicy } from "../../scripts/fake-policies/note-errors.mjs";
import { fakeRoute, startFake } from "../support/fake.js";
import { SAMPLE_PAIRS } from "../support/note-errors.js";

type Body = { model: string; messages: { role: string; content: string }[] };
type Reply = string | { content?: string; reasoning_content?: string };

const SPEC = "specs/note-errors.yaml";
const GLM = "zhipu/glm-5.3-753b-a40b";
const DIR = "results/syn-snuh-note-errors/zhipu_glm-5.3-753b-a40b/neutral-greedy";
const TRAIN = "specs/note-errors/sample/pairs_train.jsonl";

interface Validation {
  requests: number;
  thinking_audit: { thinking_off: boolean };
  request: Record<string, unknown>;
  metrics: Record<string, number | null>;
}
interface Check {
  criteria: { id: string; status: string }[];
}

describe("a per-model override validated on train notes", () => {
  let p: Project;
  let fake: { url: string; close(): Promise<void> };
  const seen: Body[] = [];
  let answer: (body: Body) => Reply = noteErrorsPolicy({ skill: 0.8, quirks: false });
  beforeAll(async () => {
    fake = await startFake({
      policy: (body: Body) => {
        seen.push(body);
        return answer(body);
      },
    });
    p = new Project();
    p.write("routes.yaml", `routes:\n${fakeRoute("zhipu", fake.url)}`);
  });
  afterAll(async () => {
    await fake.close();
    p.remove();
  });

  const build = async (refresh: string[] = []) => {
    const args = ["build", SPEC, "--model", GLM, "--registry", "routes.yaml", "--quiet"];
    const r = await p.run([...args, ...refresh]);
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(p.read(`${DIR}/metrics.json`)) as { validation: Validation | null };
  };
  const criteria = async () => {
    const r = await p.run(["check", SPEC, "--json", "--registry", "routes.yaml"]);
    const check = JSON.parse(r.stdout) as Check;
    return Object.fromEntries(
      check.criteria.filter((c) => c.id.startsWith("override_")).map((c) => [c.id, c.status]),
    );
  };

  it("sends 4 train pairs with the override; records thinking was off and every pair parsed", async () => {
    const m = await build();
    // 64 test pairs and 4 train pairs, two notes each; the train notes are the train file's first four
    // pairs.
    expect(seen.length).toBe(2 * SAMPLE_PAIRS + 2 * 4);
    const trainNotes = p
      .read(TRAIN)
      .split("\n")
      .filter(Boolean)
      .slice(0, 4)
      .flatMap((line) => {
        const pair = JSON.parse(line) as { error_note: string; clean_note: string };
        return [pair.error_note, pair.clean_note];
      });
    const sentTrain = seen.filter((body) =>
      trainNotes.some((note) => body.messages.at(-2)!.content.includes(note)),
    );
    expect(sentTrain.length).toBe(8);
    // Sent as the run is: the override's fields and its assistant prefill.
    for (const body of sentTrain) {
      expect(body).toMatchObject({ chat_template_kwargs: { enable_thinking: false } });
      expect(body.messages.at(-1)).toMatchObject({ role: "assistant", content: "<think></think>\n" });
    }
    expect(m.validation!.requests).toBe(8);
    expect(m.validation!.thinking_audit.thinking_off).toBe(true);
    expect(m.validation!.metrics.no_verdict_pairs).toBe(0);
    expect(m.validation!.request).toMatchObject({ chat_template_kwargs: { enable_thinking: false } });
    expect(await criteria()).toEqual({ override_thinking_off: "pass", override_parses: "pass" });
  });

  it("fails the check when the override leaves thinking on or the replies do not parse", async () => {
    const policy = noteErrorsPolicy({ skill: 0.8, quirks: false }) as (body: Body) => string;
    answer = (body) => ({ content: policy(body), reasoning_content: "still thinking" });
    // The validation's replies are asked again (the memo holds the earlier ones).
    await build(["--refresh", "validation_model"]);
    expect((await criteria()).override_thinking_off).toBe("fail");

    answer = () => "I cannot tell.";
    const m = await build(["--refresh", "validation_model"]);
    expect(m.validation!.metrics.no_verdict_pairs).toBe(1);
    expect((await criteria()).override_parses).toBe("fail");
  });

  it("records nothing to validate for a model without an override", async () => {
    const r = await p.run(["build", SPEC, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const prior = JSON.parse(
      p.read("results/syn-snuh-note-errors/medbench_prior/neutral-greedy/metrics.json"),
    );
    expect(prior.validation).toBeNull();
  });
});
