// The records check, case by case on copies of a real bundle: each stage's key is the hash of its record,
// and the record is what the bundled spec, its bundled files and the recorded upstream outputs give.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { checkRecords } from "../../src/bundle/verify/records.js";
import { checkSpec } from "../../src/bundle/verify/spec.js";
import { publishedOutputs } from "../../src/bundle/verify/read.js";
import type { StageDecl } from "../../src/specfile/load.js";
import type { Json } from "../../src/util/json.js";
import {
  editManifest,
  exportedBundle,
  readManifestOf,
  sha,
  type ExportedBundle,
} from "../support/verify-bundle.js";

type Identity = (decl: StageDecl) => Promise<{ value: Json } | null>;
const NONE: Identity = async () => null;

describe("the records check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  const CASES: [string, (dir: string) => void, Identity, RegExp][] = [
    [
      "the bundle as exported",
      () => {},
      NONE,
      /^\d+ stage keys recomputed from the spec, its files and the recorded outputs$/,
    ],
    [
      "a stage key edited",
      (dir) => editManifest(dir, (manifest) => void (manifest.stages.parse!.key = sha("forged"))),
      NONE,
      /^stage parse: its key [0-9a-f]{12}… is not the hash of its record$/m,
    ],
    [
      "a stage record's params edited",
      (dir) =>
        editManifest(dir, (manifest) => {
          (manifest.stages.score!.record.params as Record<string, Json>).slot_compare = "exact";
        }),
      NONE,
      /^stage score: params\.slot_compare is "exact" in its record, "casefold" from the spec/m,
    ],
    [
      "the model name changed in the bundle's variables",
      (dir) => editManifest(dir, (manifest) => void (manifest.variables.model = "openai/gpt-5")),
      NONE,
      /^stage model: params\.model is "medbench\/prior" in its record, "openai\/gpt-5" from the spec/m,
    ],
    [
      "a stage record of another kind",
      (dir) => editManifest(dir, (manifest) => void (manifest.stages.score!.record.kind = "parse")),
      NONE,
      /^stage score: its record is of kind "parse"$/m,
    ],
    [
      "a prompt template edited",
      (dir) => writeFileSync(`${dir}/spec/specs/voice-command/prompts/system.txt`, "Answer in French.\n"),
      NONE,
      /^spec\/specs\/voice-command\/prompts\/system\.txt: not the file stage prompts was built with/m,
    ],
    [
      "an upstream output's recorded hash edited",
      (dir) =>
        editManifest(dir, (manifest) => {
          const outputs = manifest.stages.model!.outputs;
          outputs[Object.keys(outputs)[0]!] = sha("other");
        }),
      NONE,
      /^stage \w+: input model\.\w+ is "[0-9a-f]{64}" in its record, "[0-9a-f]{64}" in the outputs/m,
    ],
    [
      "an identity recomputed otherwise",
      () => {},
      async (decl) => (decl.name === "score" ? { value: { other: true } } : null),
      /^stage score: identity.* in its record, .* recomputed here$/m,
    ],
  ];

  for (const [what, edit, identity, line] of CASES)
    it(`${what}: ${what.endsWith("exported") ? "passes" : "fails, naming it"}`, async () => {
      const dir = await bundle.copy(edit);
      const manifest = readManifestOf(dir);
      const { spec } = checkSpec("bundle", dir, manifest, publishedOutputs(dir, manifest));
      const check = await checkRecords(dir, manifest, spec!, identity);
      expect(check.name).toBe("records");
      expect(check.ok).toBe(what.endsWith("exported"));
      expect(check.lines.join("\n")).toMatch(line);
    });
});
