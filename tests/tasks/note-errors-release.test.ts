// What the task page states of the note-errors release, checked before anything is sent (the counts, the 87
// exposed test pairs, fields that map without guessing), and the item-check reviewers' tag on any route.
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readFileSync } from "node:fs";
import { REPO } from "../support/helpers.js";
import { readPairs } from "../../tasks/note-errors/pairs.js";
import { task } from "../../tasks/note-errors/index.js";
import {
  PAGE_EXPOSED_TEST_PAIRS,
  releaseProblems,
  type PageCounts,
} from "../../tasks/note-errors/release-check.js";
import { loadSpec } from "../../src/specfile/load.js";
import { declaredCheck } from "../../src/check/declare.js";
import { tagsOf } from "../../src/check/runs.js";

/** The task page's spec, as published (tests/data/seeds/README.md names the file). */
function page(): { counts: PageCounts; item_check: { exposure: string } } {
  const text = readFileSync(`${REPO}/tests/data/seeds/001_d0ff020c2024fa65.txt`, "utf8");
  const start = text.indexOf("{", text.indexOf("Task specification"));
  const end = text.lastIndexOf("}", text.indexOf("\nJSON: /v1/tasks"));
  return JSON.parse(text.slice(start, end + 1));
}

/** A release with the page's counts: each table's labels, in order, zipped index by index. */
function releaseLike(): Record<string, unknown>[] {
  const labels = (t: Record<string, number>) =>
    Object.entries(t).flatMap(([k, n]) => Array<string>(n).fill(k));
  const c = page().counts.test;
  const rules = labels(c.per_rule!),
    conditions = labels(c.per_condition!),
    lines = labels(c.per_edited_line!);
  const category = (rule: string) =>
    rule.startsWith("DX") ? "diagnosis" : rule.startsWith("LI") ? "lab" : "pharmacotherapy";
  return rules.map((rule, i) => ({
    pair_id: `p${i}`,
    error_note: `#${conditions[i]} x\nP: a`,
    clean_note: `#${conditions[i]} x\nP: b`,
    category: category(rule),
    rule,
    condition: conditions[i],
    edited_line: lines[i],
    edits: [{ line: lines[i], error_text: "a", clean_text: "b" }],
    item_check_exposed: i < PAGE_EXPOSED_TEST_PAIRS,
  }));
}
const read = (records: Record<string, unknown>[]) =>
  readPairs(records.map((r) => JSON.stringify(r)).join("\n"), "pairs_test.jsonl");
const problems = (records: Record<string, unknown>[]) =>
  releaseProblems(read(records), "pairs_test.jsonl", page().counts.test, PAGE_EXPOSED_TEST_PAIRS);

describe("note-errors: the release against the task page", () => {
  it("holds the page's counts and its 87 exposed test pairs", () => {
    const p = page();
    // What the prompts stage checks a real release against: `page_counts: { $spec: /counts }` of the spec.
    const spec = parseYaml(readFileSync(`${REPO}/specs/note-errors.yaml`, "utf8"));
    expect(spec.stages.prompts.params.page_counts).toEqual({ $spec: "/counts" });
    expect(spec.spec.counts).toEqual(p.counts);
    expect(p.item_check.exposure).toMatch(
      new RegExp(`\\b${PAGE_EXPOSED_TEST_PAIRS} of them in the current test pairs`),
    );
  });

  it("accepts a release with the page's counts, exposure and fields", () => {
    expect(read(releaseLike())).toHaveLength(620);
    expect(problems(releaseLike())).toEqual([]);
  });

  it("refuses a pairs file whose exposure field does not map, naming the field and the names tried", () => {
    const renamed = releaseLike().map(({ item_check_exposed, ...r }) => ({
      ...r,
      seen_by_reviewers: item_check_exposed,
    }));
    const out = problems(renamed);
    expect(out[0]).toBe(
      "pairs_test.jsonl:1: field item_check_exposed is absent " +
        "(tried item_check_exposed, exposed, item_check), and the real release is read " +
        "without guessed defaults: add its name to FIELDS (tasks/note-errors/pairs.ts)",
    );
    expect(out).toContain(
      "pairs_test.jsonl: 0 pairs marked item_check_exposed, the page states 87 (item_check.exposure): " +
        "the field does not map onto the file's",
    );
  });

  it("refuses counts that differ from the page's, per table", () => {
    const records = releaseLike();
    records[0] = { ...records[0], rule: "PH08", category: "pharmacotherapy" }; // a DX05 pair read as PH08
    expect(problems(records)).toEqual([
      "pairs_test.jsonl: counts.per_category differ from the page: " +
        "diagnosis 159 (page 160), pharmacotherapy 301 (page 300)",
      "pairs_test.jsonl: counts.per_rule differ from the page: DX05 79 (page 80), PH08 65 (page 64)",
    ]);
    const lab = releaseLike().slice(1);
    expect(problems(lab).join("\n")).toMatch(
      /counts\.per_condition differ from the page: E11 76 \(page 77\)/,
    );
  });

  it("leaves the bundled synthetic sample alone: it is labelled, and not the page's release", () => {
    const sample = readPairs(
      readFileSync(`${REPO}/specs/note-errors/sample/pairs_test.jsonl`, "utf8"),
      "pairs_test.jsonl",
    );
    expect(sample.every((p) => p.synthetic)).toBe(true);
  });
});

describe("note-errors: the item-check reviewers' tag", () => {
  const check = declaredCheck(loadSpec(`${REPO}/specs/note-errors.yaml`))!;
  const tagged = (model: string) => tagsOf(check, { model }).includes("item-check-reviewer");
  it.each([
    "openai/gpt-6",
    "openrouter/openai/gpt-6",
    "openrouter/openai/gpt-6-mini",
    "local/gpt-6",
    "google/gemini-4-pro",
    "openrouter/google/gemini-4",
    "anthropic/claude-opus-5",
    "openrouter/anthropic/claude-opus-5.1",
  ])("tags %s", (model) => expect(tagged(model)).toBe(true));
  it.each([
    "openai/gpt-oss-20b",
    "openai/gpt-60",
    "openai/gpt-5",
    "google/gemini-3",
    "anthropic/claude-sonnet-5",
  ])("does not tag %s", (model) => expect(tagged(model)).toBe(false));
});

describe("note-errors: the prompts stage checks a real release with the counts its spec hands it", () => {
  // The sample's pairs with the synthetic label removed: a "real" release whose counts are not the page's.
  const unlabelled = (file: string) =>
    readFileSync(`${REPO}/specs/note-errors/sample/${file}`, "utf8")
      .trim()
      .split("\n")
      .map((l) => {
        const { synthetic: _s, ...rest } = JSON.parse(l) as Record<string, unknown>;
        return JSON.stringify(rest);
      })
      .join("\n");
  const release = {
    text: (path: string) => unlabelled(path),
  } as unknown as Parameters<typeof task.buildRequests>[0]["release"];
  const build = (params: Record<string, unknown>) => () =>
    task.buildRequests({ release, templates: {}, params: params as never });

  it("refuses a release whose counts are not those of page_counts", () => {
    expect(build({ page_counts: page().counts })).toThrow(
      "the release is not the one the task page describes:\n  pairs_test.jsonl: counts.per_category differ",
    );
  });

  it("says what to give it when page_counts is missing", () => {
    expect(build({})).toThrow(/no page_counts .*page_counts: \{ \$spec: \/counts \}/);
  });
});
