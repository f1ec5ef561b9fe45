// The replay check: the stages that need neither data nor a model recomputed from a real bundle and
// compared with what it publishes, also when an edit rewrote the recorded hashes to match (verify's
// report, by the CLI); and how a difference is described, output by output.
import { afterAll, beforeAll, describe as group, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { describe } from "../../src/bundle/verify/differences.js";
import {
  editManifest,
  exportedBundle,
  sha,
  verifyJson,
  type ExportedBundle,
} from "../support/verify-bundle.js";

/** Edits a stage output and its results file alike, with the recorded hash rewritten to match. */
function forge(dir: string, stage: string, output: string, result: string, edit: (text: string) => string) {
  const text = edit(readFileSync(`${dir}/outputs/${stage}/${output}`, "utf8"));
  writeFileSync(`${dir}/outputs/${stage}/${output}`, text);
  writeFileSync(`${dir}/results/${result}`, text);
  editManifest(dir, (manifest) => void (manifest.stages[stage]!.outputs[output] = sha(text)));
}

const firstReplyStopped = (text: string) => {
  const rows = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  rows[0].text = JSON.stringify({
    response: "execute",
    actions: [{ type: "STOP", target: null, instrument: null, direction: null, magnitude: null }],
    message: "",
  });
  return rows.map((row) => JSON.stringify(row)).join("\n") + "\n";
};

group("the replay check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  const CASES: [string, (dir: string) => void, boolean, RegExp, RegExp | null][] = [
    [
      "the bundle as exported",
      () => {},
      true,
      new RegExp(
        "recomputed from the bundled replies: every metric, interval and verdict identical\n" +
          "replayed with this medbench's code \\(medbench [^)]+\\), " +
          "for every replayed stage the code the bundle's records name",
      ),
      null,
    ],
    [
      "a metric forged, its hash rewritten",
      (dir) =>
        forge(dir, "bootstrap", "metrics", "metrics.json", (text) => {
          const metrics = JSON.parse(text);
          metrics.metrics.exact_match.value = 0.9;
          return JSON.stringify(metrics, null, 2) + "\n";
        }),
      false,
      /recomputed from the bundled replies: [1-9]\d* difference\(s\)/,
      /^metrics\.json metrics\.exact_match\.value$/,
    ],
    [
      "a reply forged, its hash rewritten",
      (dir) => forge(dir, "model", "replies", "replies.jsonl", firstReplyStopped),
      false,
      /recomputed from the bundled replies: [1-9]\d* difference\(s\)/,
      /^items\.jsonl \S+ /,
    ],
  ];

  for (const [what, edit, ok, line, difference] of CASES)
    it(`${what}: ${ok ? "passes" : "fails, naming the difference"}`, async () => {
      const dir = await bundle.copy(edit);
      const { exitCode, report } = await verifyJson(bundle, dir);
      const replay = report!.checks.find((check) => check.name === "replay")!;
      expect(replay.ok).toBe(ok);
      expect(replay.lines.join("\n")).toMatch(line);
      expect(exitCode).toBe(ok ? 0 : 1);
      if (difference)
        expect(report!.differences.map((diff) => diff.what)).toContainEqual(
          expect.stringMatching(difference),
        );
      else expect(report!.differences).toEqual([]);
    });
});

group("a difference, described", () => {
  const buffer = (text: string) => Buffer.from(text);
  const items = (...rows: object[]) => buffer(rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
  const CASES: [string, string, Buffer | undefined, Buffer, object[]][] = [
    [
      "an output the bundle lacks",
      "x.json",
      undefined,
      buffer("{}"),
      [{ what: "x.json: not in the bundle", published: null, recomputed: "(present)" }],
    ],
    [
      "a metric",
      "metrics.json",
      buffer('{"metrics":{"em":{"value":0.5}}}'),
      buffer('{"metrics":{"em":{"value":0.6}}}'),
      [{ what: "metrics.json metrics.em.value", published: 0.5, recomputed: 0.6 }],
    ],
    [
      "a verdict, an item added and an item gone",
      "items.jsonl",
      items({ id: "a", verdicts: { exact: true } }, { id: "b", verdicts: { exact: true } }),
      items({ id: "a", verdicts: { exact: false } }, { id: "c", verdicts: { exact: true } }),
      [
        { what: "items.jsonl a verdicts.exact", published: true, recomputed: false },
        { what: "items.jsonl c", published: null, recomputed: { exact: true } },
        { what: "items.jsonl b", published: "(present)", recomputed: null },
      ],
    ],
    [
      "any other output",
      "parsed.jsonl",
      buffer("one\n"),
      buffer("two\n"),
      [
        {
          what: "parsed.jsonl: bytes differ",
          published: sha("one\n").slice(0, 16),
          recomputed: sha("two\n").slice(0, 16),
        },
      ],
    ],
  ];

  for (const [what, name, published, recomputed, expected] of CASES)
    it(what, () => expect(describe(name, published, recomputed)).toEqual(expected));
});
