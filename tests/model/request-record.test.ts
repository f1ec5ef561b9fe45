// metrics.request against what the fake server received (over real HTTP, the CLI driving the build): with
// items sent under several response formats, and with several request configurations, every kind of body
// sent is recorded with its fields and its number of items, and no field is claimed that was not sent.
import { describe, expect, it } from "vitest";
import { Project, cleanedAfterEach } from "../support/rig.js";
import { fakeRoute, startFake, type Fake } from "../support/fake.js";
import { sortedJson } from "../../src/util/json.js";
import { VOICE_SAMPLE_ITEMS } from "../support/helpers.js";
import { SAMPLE_NOTES } from "../support/note-errors.js";

const { servers, projects } = cleanedAfterEach();

interface Kind {
  fields: Record<string, unknown>;
  items: number;
}

/** The kinds of body metrics.request says were sent, each with its items (one kind: all the run's). */
function kindsOf(request: Record<string, unknown>, n: number): Map<string, Kind> {
  const { messages: _messages, variants, ...shared } = request;
  const out = new Map<string, Kind>();
  if (!variants) return out.set("", { fields: shared, items: n });
  for (const [label, v] of Object.entries(variants as Record<string, Kind>))
    out.set(label, { fields: { ...shared, ...v.fields }, items: v.items });
  return out;
}
/** A body's fields but its messages, as sorted JSON. */
const shapeOf = (body: Record<string, unknown>) => {
  const { messages: _messages, ...fields } = body;
  return sortedJson(fields)!;
};

async function project(server: Record<string, unknown>): Promise<{ fake: Fake; p: Project }> {
  const fake = await startFake(server);
  servers.push(fake);
  const p = new Project();
  projects.push(p);
  p.write(
    "routes.yaml",
    `routes:\n${fakeRoute("fake", fake.url).replace("concurrency: 8", "concurrency: 1")}`,
  );
  return { fake, p };
}

describe("metrics.request", () => {
  it("records each response format items were sent with, and warns when any went lower", async () => {
    const { fake, p } = await project({ refuseSchema: "vllm-schema-unsupported", refuseSchemaPeriod: 4 });
    const r = await p.buildAgainstFake();
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = "results/kor-surgical-robot-voice-command/fake_test-model";
    const m = JSON.parse(p.read(`${dir}/metrics.json`));
    const kinds = kindsOf(m.metrics.request, VOICE_SAMPLE_ITEMS);
    expect([...kinds.keys()].sort()).toEqual(["json_object", "json_schema"]);
    expect(m.metrics.request).not.toHaveProperty("response_format"); // not every item had one
    // Each kind's items are the items of that format, as the replies and the format counts say.
    const replies = p
      .read(`${dir}/replies.jsonl`)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { format: string });
    for (const [label, kind] of kinds) {
      expect(kind.items).toBe(replies.filter((x) => x.format === label).length);
      expect(m.metrics.response_format[label]).toBe(kind.items);
    }
    // The fields of each kind are those of bodies the server received, and every body answered is one.
    const answered = new Set(
      fake.stats.received.filter((x) => x.fault === null).map((x) => shapeOf(x.body)),
    );
    expect(new Set([...kinds.values()].map((k) => sortedJson(k.fields)))).toEqual(answered);
    const lower = kinds.get("json_object")!.items;
    expect(r.stderr).toContain(
      `${lower} of ${VOICE_SAMPLE_ITEMS} items were sent with a lower response format than json_schema ` +
        `(json_object ${lower};`,
    );
    expect(r.stderr).toMatch(/the server refused the schema \(HTTP 400: The provided JSON schema contains/);
  });

  it("records the fields of each request configuration, as the server received them", async () => {
    const { fake, p } = await project({ policy: "note-errors" });
    const r = await p.run([
      "build",
      "specs/note-errors.yaml",
      "--model",
      "fake/nurse-7b",
      "--registry",
      "routes.yaml",
      "--configurations",
      "all",
    ]);
    expect(r.exitCode, r.stderr).toBe(1); // incomplete: the policy's permanent 500s
    const m = JSON.parse(p.read("results/syn-snuh-note-errors/fake_nurse-7b/all/metrics.json"));
    const kinds = kindsOf(m.metrics.request, 4 * SAMPLE_NOTES);
    expect([...kinds.keys()].sort()).toEqual([
      "conservative-greedy",
      "conservative-sample",
      "neutral-greedy",
      "neutral-sample",
    ]);
    // Every distinct body received is of one recorded kind, and each kind has as many as its items.
    const bodies = new Map<string, string>(); // body -> its shape
    for (const x of fake.stats.received) bodies.set(sortedJson(x.body)!, shapeOf(x.body));
    expect(bodies.size).toBe(4 * SAMPLE_NOTES);
    const byShape = new Map<string, number>();
    for (const shape of bodies.values()) byShape.set(shape, (byShape.get(shape) ?? 0) + 1);
    const recorded = new Map<string, number>(); // two configurations may differ in their prompts alone
    for (const k of kinds.values()) {
      const shape = sortedJson(k.fields)!;
      recorded.set(shape, (recorded.get(shape) ?? 0) + k.items);
    }
    expect(recorded).toEqual(byShape);
    expect(kinds.get("neutral-sample")!.fields).toMatchObject({ temperature: 0.7, top_p: 0.9 });
    expect(kinds.get("neutral-greedy")!.fields).not.toHaveProperty("top_p");
  });
});
