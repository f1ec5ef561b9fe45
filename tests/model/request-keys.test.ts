// Requests are stored with their shared parts once (src/contract/records.ts); what is sent, and so every
// per-request key and cached reply, must stay as it was: the keys of the three tasks' requests, through each
// route of registry/providers.yaml in each format, equal those the code before the change computed, one
// digest per route and model (tests/data/request-keys/README.md).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { Project } from "../support/rig.js";
import { testData } from "../support/helpers.js";
import {
  readRecords,
  readStoredRequests,
  writeRecords,
  type RequestRecord,
} from "../../src/contract/records.js";
import { sortKeys, sortedJson } from "../../src/util/json.js";
import { createHash } from "node:crypto";
import { serialisedRequest } from "../../src/model/openai.js";
import type { Route } from "../../src/model/registry.js";
// @ts-expect-error: a plain ESM script, also run by hand
import { requestKeysOf } from "../../scripts/reference/request-keys-lib.mjs";

const golden = (task: string) =>
  JSON.parse(readFileSync(testData("request-keys", `${task}.json`), "utf8")) as {
    requests: number;
    keys: Record<string, string>;
  };

/** The requests object the prompts stage of the lock's build `build` wrote. */
function requestsObject(p: Project, spec: string, build: string): string {
  const lock = JSON.parse(p.read("medbench.lock")) as {
    specs: Record<
      string,
      { builds: Record<string, { stages: { prompts: { outputs: { requests: string } } } }> }
    >;
  };
  const h = lock.specs[spec]!.builds[build]!.stages.prompts.outputs.requests;
  return p.read(`cache/objects/${h.slice(0, 2)}/${h}`);
}

describe("request keys are those of the code before requests shared their parts", () => {
  it.each([
    [
      "voice-command",
      ["build", "specs/voice-command.yaml"],
      "kor-surgical-robot-voice-command/medbench_prior",
      3, // the system prompts of the sample's two scenes, and the schema
    ],
    [
      "mtsamples",
      ["build", "specs/mtsamples.yaml", "--data-dir", testData("mtsamples_processed")],
      "mtsamples-replicate/medbench_impression",
      0, // one short system prompt (inline), each note once
    ],
  ])("%s", async (task, args, results, sharedParts) => {
    const p = new Project();
    const r = await p.run([...args, "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = p.read(`results/${results}/requests.jsonl`);
    const got = (await requestKeysOf(text)) as { keys: Record<string, string> };
    expect(got.keys).toEqual(golden(task).keys);
    // Stored once: no shared part also appears inline in a record.
    const { shared, stored } = readStoredRequests(text);
    expect(shared.size).toBe(sharedParts);
    const lines = text
      .split("\n")
      .slice(sharedParts ? 1 : 0)
      .join("\n");
    for (const v of shared.values()) expect(lines.includes(JSON.stringify(v).slice(1, 200))).toBe(false);
    expect(stored.length).toBe(golden(task).requests);
    p.remove();
  });

  it("note-errors, every configuration", async () => {
    const p = new Project();
    const r = await p.run(["build", "specs/note-errors.yaml", "--configurations", "all", "--quiet"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const build = "configurations=all limit=null model=medbench/prior subset=null trained_on=null";
    const text = requestsObject(p, "specs/note-errors.yaml", build);
    expect(((await requestKeysOf(text)) as { keys: unknown }).keys).toEqual(golden("note-errors").keys);
    p.remove();
  });
});

describe("a request is serialised once: the bytes sent are the bytes its key hashes", () => {
  const definition = (base_url: unknown, body: Record<string, unknown>) =>
    createHash("sha256")
      .update(sortedJson({ base_url, model: body.model, body })!)
      .digest("hex");
  it.each([
    ["http://127.0.0.1:8000/v1", { model: "m", messages: [{ role: "user", content: "a" }], z: 0, a: false }],
    [
      'https://x.example/v1?q="é"',
      { model: 'q/\u2028"x"', top_p: 1, messages: [], extra: { b: [1], a: null } },
    ],
    ["http://h/v1", { messages: [], model: 7 }], // a model that is not a string: the definition as it is
  ])("%s", (base_url, body) => {
    const { payload, key } = serialisedRequest({ base_url } as Route, body as never);
    expect(payload.toString("utf8")).toBe(sortedJson(body));
    expect(key).toBe(definition(base_url, body));
  });
});

describe("requests files: what is written reads back as the same records", () => {
  const long = (s: string) => s.repeat(200);
  const schema = {
    name: "s",
    schema: { type: "object", properties: { z: { type: "string", description: long("d") }, a: {} } },
  };
  const req = (
    id: string,
    system: string,
    user: string,
    extra: Partial<RequestRecord> = {},
  ): RequestRecord => ({
    id,
    messages: [
      { role: "system", content: system },
      { role: "user", content: user },
    ],
    meta: { subset: "x" },
    ...extra,
  });
  it.each<[string, RequestRecord[], number]>([
    ["no records", [], 0],
    [
      "a long system prompt in two records: shared",
      [req("a", long("S"), "u1"), req("b", long("S"), "u2")],
      1,
    ],
    ["a long prompt in one record only: inline", [req("a", long("S"), "u1"), req("b", long("T"), "u2")], 0],
    ["a short repeated prompt: inline", [req("a", "sys", "u"), req("b", "sys", "u")], 0],
    [
      "a schema and a prompt, each shared, equal values from distinct objects",
      [
        req("a", long("S"), "u1", { schema }),
        req("b", long("S"), "u2", { schema: JSON.parse(JSON.stringify(schema)) as RequestRecord["schema"] }),
        req("c", long("U"), long("S"), { generation: { temperature: 0.7 }, unit: "p1", configuration: "c" }),
      ],
      2,
    ],
  ])("%s", (_what, rows, sharedParts) => {
    const text = writeRecords("requests", rows);
    expect(readStoredRequests(text).shared.size).toBe(sharedParts);
    expect(readRecords("requests", text)).toEqual(sortKeys(rows));
    expect(writeRecords("requests", readRecords("requests", text))).toBe(text); // same records, same bytes
  });
  it("a reference to a part missing from the file is refused with the record named", () => {
    const text = writeRecords("requests", [req("a", long("S"), "u1"), req("b", long("S"), "u2")]);
    const broken = text.split("\n").slice(1).join("\n");
    expect(() => readRecords("requests", broken)).toThrow(/request a: no shared part [0-9a-f]{64}/);
  });
});
