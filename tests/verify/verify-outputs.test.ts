// The outputs check, case by case on copies of a real bundle: every bundled output and results file
// against the hash the build recorded; a withheld output is not looked for.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { checkOutputs } from "../../src/bundle/verify/outputs.js";
import { publishedOutputs, resultNamer } from "../../src/bundle/verify/read.js";
import {
  editMember,
  exportedBundle,
  readManifestOf,
  type ExportedBundle,
} from "../support/verify-bundle.js";

const HI = /("exact_match": \{\n(?:.*\n)*?\s+"hi": )[0-9.]+/;

describe("the outputs check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  const CASES: [string, (dir: string) => void, readonly string[], boolean, RegExp][] = [
    ["the bundle as exported", () => {}, [], true, /^\d+ files match their recorded hashes$/],
    [
      "a reply edited",
      (dir) => editMember(dir, "outputs/model/replies", /"id":/, '"id" :'),
      [],
      false,
      /^replies\.jsonl \(model\/replies\) was changed after the build: sha256 \w+…, recorded \w{16}…$/m,
    ],
    [
      "a reply edited, the output withheld",
      (dir) => editMember(dir, "outputs/model/replies", /"id":/, '"id" :'),
      ["model/replies"],
      true,
      /^\d+ files match their recorded hashes$/,
    ],
    [
      "the published metric edited",
      (dir) => editMember(dir, "results/metrics.json", HI, "$10.9"),
      [],
      false,
      /^results\/metrics\.json was changed after the build: sha256 \w{16}…, recorded \w{16}…$/m,
    ],
    [
      "a stage output removed",
      (dir) => rmSync(`${dir}/outputs/bootstrap/metrics`),
      [],
      false,
      /^metrics\.json is missing from the bundle$/m,
    ],
    [
      "a results file removed (the members check names it)",
      (dir) => rmSync(`${dir}/results/metrics.json`),
      [],
      true,
      /^\d+ files match their recorded hashes$/,
    ],
  ];

  for (const [what, edit, withheld, ok, line] of CASES)
    it(`${what}: ${ok ? "passes" : "fails, naming it"}`, async () => {
      const dir = await bundle.copy(edit);
      const manifest = readManifestOf(dir);
      const published = publishedOutputs(dir, manifest);
      const check = checkOutputs(dir, manifest, published, withheld, resultNamer(manifest));
      expect(check.name).toBe("outputs");
      expect(check.ok).toBe(ok);
      expect(check.lines.join("\n")).toMatch(line);
      if (withheld.length) expect(check.lines.join("\n")).not.toMatch(/\(model\/replies\)/);
    });
});
