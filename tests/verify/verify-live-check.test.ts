// The live check's parts that need no server: the requests without an answer read from a real bundle's
// model stage (a failure is never a verdict), and the check a live run's report makes, complete or not.
// The live runs themselves, against the fake server: tests/verify/verify-live.test.ts and
// verify-live-fixture.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { STAGE_KINDS } from "../../stages/index.js";
import { failuresOf } from "../../src/bundle/verify/failures.js";
import { liveCheck } from "../../src/bundle/verify/live.js";
import type { LiveReport } from "../../src/bundle/verify/types.js";
import { exportedBundle, sha, type ExportedBundle } from "../support/verify-bundle.js";

describe("the requests of a model stage without an answer", () => {
  let bundle: ExportedBundle;
  let replies: { id: string; request_sha256: string | null; error: string | null }[];
  beforeAll(async () => {
    bundle = await exportedBundle();
    const dir = await bundle.copy();
    replies = readFileSync(`${dir}/outputs/model/replies`, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
  });
  afterAll(() => bundle.remove());

  const CASES: [string, number[]][] = [
    ["every request answered", []],
    ["one request failed", [0]],
    ["three requests failed", [0, 1, 2]],
  ];

  for (const [what, failing] of CASES)
    it(what, () => {
      // The bundle's baseline sent no request (its replies' request_sha256 is null): each row gets a key of
      // its own, as a model's reply has, so that the map of request key to item is filled and checked.
      const rows = replies.map((reply, i) => ({
        ...reply,
        request_sha256: sha(`request ${i}`),
        ...(failing.includes(i) ? { error: "HTTP 503" } : {}),
      }));
      const items = new Map<string, string>();
      const text = rows.map((row) => JSON.stringify(row)).join("\n") + "\n";
      const failures = failuresOf("model", STAGE_KINDS.get("model"), { replies: text }, items);
      expect(failures).toEqual({
        stage: "model",
        failed: failing.length,
        total: replies.length,
        ids: [...new Set(failing.map((i) => replies[i]!.id))].sort(),
      });
      expect(items).toEqual(new Map(rows.map((row) => [row.request_sha256, row.id])));
      expect(items.size).toBe(replies.length);
    });

  it("reads nothing from a stage kind that declares no answers", () => {
    expect(failuresOf("x", undefined, { replies: "not read" })).toEqual({
      stage: "x",
      failed: 0,
      total: 0,
      ids: [],
    });
  });
});

describe("the live check", () => {
  const report = (failures: LiveReport["failures"], incomplete: string | null) =>
    ({ failures, incomplete }) as LiveReport;
  const CASES: [string, LiveReport, boolean, string[]][] = [
    [
      "every request answered",
      report([{ stage: "model", failed: 0, total: 42, ids: [] }], null),
      true,
      ["model: 42 of 42 requests answered"],
    ],
    ["no model stage", report([], null), true, ["no model stage"]],
    [
      "requests without an answer",
      report(
        [{ stage: "model", failed: 2, total: 42, ids: ["a", "b"] }],
        "2 of 42 live requests failed (no answer)",
      ),
      false,
      [
        "incomplete: 2 of 42 live requests failed (no answer)",
        "model: 40 of 42 requests answered",
        "the failed requests are no verdicts (left out of the comparison below); run verify --live again: " +
          "it sends only the requests without an answer",
      ],
    ],
  ];

  for (const [what, live, ok, lines] of CASES)
    it(what, () => expect(liveCheck(live)).toEqual({ name: "live", ok, lines }));
});
