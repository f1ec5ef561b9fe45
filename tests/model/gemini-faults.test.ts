// The Gemini API's replies and errors through the CLI (voice-command against the fake Gemini server, which
// replays scripts/provider-replies/gemini/, each shape with its source): a 429 and a 503 are tried again and
// answered, a blocked prompt and a safety stop are answers counted as filtered, a context-length refusal is
// a final refusal of its item, a reply without candidates is a failed try; a refused key stops the route.
// The next build sends nothing that has an answer or a final refusal.
import { afterEach, describe, expect, it } from "vitest";
import { Project, expectCleanFailure } from "../support/rig.js";
import { geminiRoute, startGeminiFake, type GeminiFake } from "../support/fake-gemini.js";

const KEY = "gm-faults-key-0123456789";
const RESULTS = "results/kor-surgical-robot-voice-command/gm_gemini-2.5-flash";

const servers: GeminiFake[] = [];
const projects: Project[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
  while (projects.length) projects.pop()!.remove();
});

interface Reply {
  id: string;
  error: string | null;
  text: string;
  finish_reason: string | null;
  request_refused?: { kind: string };
}

async function setup(options: Record<string, unknown>) {
  const fake = await startGeminiFake({ policy: "voice-command", apiKey: KEY, ...options });
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write("routes.yaml", `routes:\n${geminiRoute("gm", fake.url)}`);
  const build = (key = KEY) =>
    p.run(
      [
        "build",
        "specs/voice-command.yaml",
        "--model",
        "gm/gemini-2.5-flash",
        "--registry",
        "routes.yaml",
        "--json",
      ],
      { GEMINI_API_KEY: key },
    );
  return { fake, p, build };
}

const replies = (p: Project): Reply[] =>
  p
    .read(`${RESULTS}/replies.jsonl`)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Reply);

describe("the Gemini API's replies and errors through a build", () => {
  it("retries, filters and final refusals, each as the provider means it", async () => {
    const replay = {
      "rate-limit-retry-info": 41,
      overloaded: 37,
      "no-candidates": 31,
      "prompt-blocked": 29,
      "finish-safety": 23,
      "context-length": 19,
    };
    const { fake, p, build } = await setup({ replay });
    const run = await build();
    expect(run.exitCode, run.stderr).toBe(0);
    for (const name of Object.keys(replay))
      expect(fake.stats.faults[`replay-${name}`], name).toBeGreaterThan(0);
    const all = replies(p);
    expect(all.filter((reply) => reply.error !== null && !reply.request_refused)).toEqual([]);
    const refused = all.filter((reply) => reply.request_refused);
    // Items that share a body (one utterance in two subsets) share its one call.
    expect(refused.length).toBeGreaterThanOrEqual(fake.stats.faults["replay-context-length"]!);
    for (const reply of refused) expect(reply.request_refused!.kind).toBe("context_length");
    const filtered = all.filter((reply) => reply.finish_reason === "content_filter");
    expect(filtered.length).toBeGreaterThan(0);
    const metrics = JSON.parse(p.read(`${RESULTS}/metrics.json`));
    expect(metrics.metrics.reply_audit.content_filtered).toBe(filtered.length);
    expect(metrics.metrics.api_errors).toBe(0);
    // Stored: the answers and the final refusals; the next build sends nothing.
    const sent = fake.stats.requests;
    const again = await build();
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fake.stats.requests).toBe(sent);
  });

  it("a refused key stops the route, with the provider's words and no stack trace", async () => {
    const { fake, p, build } = await setup({});
    p.edit("routes.yaml", (text) => text.replace("max_failures_in_a_row: 1000", "max_failures_in_a_row: 4"));
    const run = await build("not-the-key");
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("API key not valid");
    expect(run.stderr).not.toContain("not-the-key");
    expectCleanFailure(run.stderr);
    // Stopped after 4 in a row, and those in flight (8 at once): far from the 138 items.
    expect(fake.stats.requests).toBeLessThan(20);
    expect(run.stderr).toMatch(/route gm .*stopped after/);
  });
});
