// The members check, case by case on copies of a real bundle: a member added, removed or turned into a
// link, bundle.json against the spec it names, and its copies (stages/*.json, lock.json) against it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { checkMembers } from "../../src/bundle/verify/members.js";
import { checkSpec } from "../../src/bundle/verify/spec.js";
import { publishedOutputs } from "../../src/bundle/verify/read.js";
import {
  editManifest,
  editMember,
  exportedBundle,
  readManifestOf,
  sha,
  type ExportedBundle,
} from "../support/verify-bundle.js";

describe("the members check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  const CASES: [string, (dir: string) => void, RegExp][] = [
    ["the bundle as exported", () => {}, /^\d+ members, each one the spec and the manifest name$/],
    [
      "an HTML file added",
      (dir) => writeFileSync(`${dir}/results/index.html`, "<p>hi</p>"),
      /^results\/index\.html: not a member of a medbench bundle \(added after export\)$/,
    ],
    [
      "an output added to a stage",
      (dir) => writeFileSync(`${dir}/outputs/model/extra`, "{}"),
      /^outputs\/model\/extra: not a member of a medbench bundle/,
    ],
    [
      "results/items.jsonl removed",
      (dir) => rmSync(`${dir}/results/items.jsonl`),
      /^results\/items\.jsonl: missing from the bundle$/,
    ],
    [
      "a prompt template removed",
      (dir) => rmSync(`${dir}/spec/specs/voice-command/prompts/user.txt`),
      /^spec\/specs\/voice-command\/prompts\/user\.txt: missing from the bundle$/,
    ],
    [
      "a member turned into a link",
      (dir) => {
        rmSync(`${dir}/results/items.jsonl`);
        symlinkSync(`${dir}/lock.json`, `${dir}/results/items.jsonl`);
      },
      /^results\/items\.jsonl: a link or special file, not a file$/,
    ],
    [
      "a stage's key record file edited",
      (dir) => editMember(dir, "stages/bootstrap.json", '"resamples": 1000', '"resamples": 10'),
      /^stages\/bootstrap\.json: differs from stage bootstrap in bundle\.json$/,
    ],
    [
      "the lock entry edited",
      (dir) => {
        const lock = JSON.parse(readFileSync(`${dir}/lock.json`, "utf8"));
        lock["specs/voice-command.yaml"].stages.model.key = sha("forged");
        writeFileSync(`${dir}/lock.json`, JSON.stringify(lock, null, 2) + "\n");
      },
      /^lock\.json: differs from the lock entry bundle\.json gives \(keys, outputs or pins\)$/,
    ],
    [
      "the pins edited",
      (dir) =>
        editManifest(dir, (manifest) => {
          const source = Object.keys(manifest.pins)[0]!;
          manifest.pins[source]!["benchmark/rules_v0.1.txt"] = sha("other rules");
        }),
      /^bundle\.json pins\..*rules_v0\.1\.txt: "[0-9a-f]{64}", the bundled spec gives "[0-9a-f]{64}"$/m,
    ],
    [
      "another format",
      (dir) => editManifest(dir, (manifest) => void (manifest.format = 7)),
      /^bundle\.json format: 7, this medbench reads format 1$/m,
    ],
    [
      "another slug",
      (dir) => editManifest(dir, (manifest) => void (manifest.slug = "another-task")),
      /^bundle\.json slug: "another-task", the bundled spec gives "kor-surgical-robot-voice-command"$/m,
    ],
    [
      "outputs said to be withheld",
      (dir) =>
        editManifest(dir, (manifest) => void (manifest.withheld = { why: "x", outputs: ["model/replies"] })),
      /^bundle\.json withheld outputs.*"model\/replies"/m,
    ],
  ];

  for (const [what, edit, line] of CASES)
    it(`${what}: ${what.endsWith("exported") ? "passes" : "fails, naming it"}`, async () => {
      const dir = await bundle.copy(edit);
      const manifest = readManifestOf(dir);
      const { spec } = checkSpec("bundle", dir, manifest, publishedOutputs(dir, manifest));
      const check = checkMembers(dir, manifest, spec, []);
      expect(check.name).toBe("members");
      expect(check.ok).toBe(what.endsWith("exported"));
      expect(check.lines.join("\n")).toMatch(line);
    });

  it("expects no bundled copy of a withheld output", async () => {
    const dir = await bundle.copy((copy) => rmSync(`${copy}/outputs/model/replies`));
    const manifest = readManifestOf(dir);
    const { spec } = checkSpec("bundle", dir, manifest, publishedOutputs(dir, manifest));
    const check = checkMembers(dir, manifest, spec, ["model/replies"]);
    expect(check.lines.join("\n")).not.toMatch(/outputs\/model\/replies/);
    expect(check.lines.join("\n")).toMatch(/bundle\.json withheld outputs/);
  });
});
