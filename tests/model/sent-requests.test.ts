// metrics.request's record of the bodies sent (src/model/sent-requests.ts): one kind as sent, several as the
// shared fields and each kind's own, labelled so that every kind is told apart whatever order items came in.
import { describe, expect, it } from "vitest";
import { SentRequests } from "../../src/model/sent-requests.js";
import type { Json } from "../../src/util/json.js";

const body = (fields: Record<string, Json>): Record<string, Json> => ({
  model: "m",
  messages: [{ role: "user", content: "a note" }],
  ...fields,
});

describe("the record of the bodies sent", () => {
  it("is the one kind's fields, without messages, when every item went alike", () => {
    const sent = new SentRequests();
    sent.add(body({ temperature: 0 }), undefined, "none");
    sent.add(body({ temperature: 0 }), undefined, "none");
    expect(sent.record()).toEqual({ model: "m", temperature: 0 });
    expect(new SentRequests().record()).toBeNull();
  });

  it("labels kinds by configuration and format, and numbers what those cannot tell apart", () => {
    const make = (order: number[]) => {
      const kinds: [Record<string, Json>, string | undefined, string][] = [
        [body({ temperature: 0, response_format: { type: "json_object" } }), "greedy", "json_object"],
        [body({ temperature: 0.7 }), "sample", "none"],
        [body({ temperature: 0.7, seed: 1 }), "sample", "none"],
      ];
      const sent = new SentRequests();
      for (const i of order) sent.add(...kinds[i]!);
      return sent.record();
    };
    const record = make([0, 1, 2, 2]);
    expect(record).toEqual({
      model: "m",
      variants: {
        "greedy json_object": {
          items: 1,
          fields: { temperature: 0, response_format: { type: "json_object" } },
        },
        // Numbered in the order of the bodies' sorted JSON ("seed" before "temperature").
        "sample none": { items: 2, fields: { temperature: 0.7, seed: 1 } },
        "sample none #2": { items: 1, fields: { temperature: 0.7 } },
      },
    });
    expect(make([2, 2, 1, 0])).toEqual(record); // the order items came in changes nothing
  });

  // A body like the last one of its configuration and format is counted without its JSON: only when every
  // member is the same, down to an array's holes and a member left undefined.
  it.each<[string, Record<string, Json>, Record<string, Json>]>([
    ["a value deep inside", { rf: { schema: { a: [1, 2] } } }, { rf: { schema: { a: [1, 3] } } }],
    ["an array's length", { stop: ["a", "b"] }, { stop: ["a"] }],
    ["a trailing hole", { stop: Object.assign(new Array<Json>(2), { 0: "a" }) }, { stop: ["a"] }],
    ["a member more", { temperature: 0 }, { temperature: 0, top_p: 1 }],
    ["a member more inside", { rf: { type: "a" } }, { rf: { type: "a", strict: true } }],
    ["a number and its string", { seed: 1 }, { seed: "1" }],
    ["an object and an array", { extra: { 0: "a" } }, { extra: ["a"] }],
  ])("tells kinds apart by %s", (_what, first, second) => {
    const sent = new SentRequests();
    for (const fields of [first, first, second]) sent.add(body(fields), undefined, "none");
    const variants = sent.record()!.variants as Record<string, { items: number }>;
    expect(
      Object.values(variants)
        .map((kind) => kind.items)
        .sort(),
    ).toEqual([1, 2]);
  });

  it("counts equal bodies as one kind whatever objects hold their fields", () => {
    const sent = new SentRequests();
    const fields = () => ({ rf: { type: "json_schema", schema: { b: [1, { c: null }], a: "x" } }, t: 0 });
    sent.add(body(fields()), undefined, "none");
    sent.add(
      body({ t: 0, rf: { schema: { a: "x", b: [1, { c: null }] }, type: "json_schema" } }),
      undefined,
      "none",
    );
    sent.add({ ...body(fields()), skipped: undefined as unknown as Json }, undefined, "none");
    expect(sent.record()).toEqual({ model: "m", ...fields() });
  });
});
