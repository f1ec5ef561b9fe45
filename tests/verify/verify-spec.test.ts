// The spec check and the local spec check, case by case on copies of a real bundle: the bundled spec hashes
// to the recorded spec_hash (bundle.json's and metrics.json's), and a local spec of the same task is diffed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { checkSpec } from "../../src/bundle/verify/spec.js";
import { checkLocalSpec } from "../../src/bundle/verify/local-spec.js";
import { publishedOutputs } from "../../src/bundle/verify/read.js";
import {
  editManifest,
  editMember,
  exportedBundle,
  readManifestOf,
  type ExportedBundle,
} from "../support/verify-bundle.js";

const SPEC = "spec/specs/voice-command.yaml";
const MAX_TOKENS = /(\n\s+request:\n(?:.*\n)*?\s+max_tokens: )800\n/;

describe("the spec check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  const CASES: [string, (dir: string) => void, boolean, RegExp][] = [
    [
      "the bundle as exported",
      () => {},
      true,
      /voice-command\.yaml hashes to [0-9a-f]+, the recorded spec_hash/,
    ],
    [
      "the spec edited, its own spec_hash line removed",
      (dir) => {
        editMember(dir, SPEC, MAX_TOKENS, "$11024\n");
        editMember(dir, SPEC, /^spec_hash: .*\n/m, "");
      },
      false,
      /hashes to [0-9a-f]+, but the result records spec_hash [0-9a-f]+: the spec was edited/,
    ],
    [
      "bundle.json's spec_hash edited (the message names metrics.json's)",
      (dir) => editManifest(dir, (manifest) => void (manifest.spec_hash = "0".repeat(64))),
      false,
      /hashes to ([0-9a-f]+), but the result records spec_hash \1: the spec was edited/,
    ],
    [
      "metrics.json's spec_hash edited",
      (dir) =>
        editMember(
          dir,
          "outputs/bootstrap/metrics",
          /"spec_hash": "[0-9a-f]+"/,
          `"spec_hash": "${"1".repeat(64)}"`,
        ),
      false,
      /but the result records spec_hash 1{64}: the spec was edited/,
    ],
    [
      "a spec that does not load",
      (dir) => writeFileSync(`${dir}/${SPEC}`, "slug: [unclosed\n"),
      false,
      /^the bundled spec does not load: /,
    ],
  ];

  for (const [what, edit, ok, line] of CASES)
    it(`${what}: ${ok ? "passes" : "fails"}`, async () => {
      const dir = await bundle.copy(edit);
      const manifest = readManifestOf(dir);
      const { spec, check } = checkSpec("bundle", dir, manifest, publishedOutputs(dir, manifest));
      expect(check.name).toBe("spec");
      expect(check.ok).toBe(ok);
      expect(check.lines.join("\n")).toMatch(line);
      expect(spec === null).toBe(what === "a spec that does not load");
    });
});

describe("the local spec check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  const CASES: [string, ((text: string) => string) | null, boolean | null, RegExp | null][] = [
    ["no spec of the task here", null, null, null],
    ["the same spec", (text) => text, true, /specs\/voice-command\.yaml is the same as the bundled spec/],
    [
      "another number of resamples",
      (text) => text.replace("resamples: 1000", "resamples: 2000"),
      null,
      /differs from the bundled spec \(information[\s\S]*\/bootstrap\/params\/resamples: 1000 -> 2000/,
    ],
    [
      "another published spec of the same version",
      (text) => text.replace(MAX_TOKENS, "$11024\n"),
      false,
      /has another published spec \(member `spec`\) for the same version \d+: the bundled spec is not/,
    ],
  ];

  for (const [what, edit, ok, line] of CASES)
    it(`${what}: ${ok === null ? "information" : ok ? "passes" : "fails"}`, async () => {
      const dir = await bundle.copy();
      const root = bundle.elsewhere.path(`root-${what.replaceAll(" ", "-")}`);
      if (edit) {
        const text = readFileSync(bundle.built.path("specs/voice-command.yaml"), "utf8");
        mkdirSync(`${root}/specs`, { recursive: true });
        writeFileSync(`${root}/specs/voice-command.yaml`, edit(text));
      }
      const check = checkLocalSpec(root, dir, readManifestOf(dir));
      if (!line) return void expect(check).toBeNull();
      expect(check).toMatchObject({ name: "local spec", ok });
      expect(check!.lines.join("\n")).toMatch(line);
    });
});
