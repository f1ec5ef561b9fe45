// The data check, case by case on a real bundle: with --data-dir, the user's copy of the release against
// the pins the bundle records; without it, not checked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { checkData } from "../../src/bundle/verify/data.js";
import {
  editManifest,
  exportedBundle,
  readManifestOf,
  type ExportedBundle,
} from "../support/verify-bundle.js";

const RULES = "benchmark/rules_v0.1.txt";

describe("the data check", () => {
  let bundle: ExportedBundle;
  beforeAll(async () => void (bundle = await exportedBundle()));
  afterAll(() => bundle.remove());

  /** A copy of the bundled sample release, edited by `edit` (null: no data folder given). */
  let copies = 0;
  const release = (edit: ((dir: string) => void) | null) => {
    if (!edit) return undefined;
    const dir = bundle.elsewhere.path(`release${copies++}`);
    cpSync(bundle.built.path("specs/voice-command/sample"), dir, { recursive: true });
    edit(dir);
    return dir;
  };

  const CASES: [string, ((dir: string) => void) | null, boolean | null, RegExp][] = [
    ["no --data-dir", null, null, /^not checked: the replay needs no data \(pass --data-dir/],
    ["the release as pinned", () => {}, true, /^\d+ files of .* match the pins$/],
    [
      "a release file edited",
      (dir) => writeFileSync(`${dir}/${RULES}`, "other rules\n"),
      false,
      /^benchmark\/rules_v0\.1\.txt: sha256 [0-9a-f]{16}…, pinned [0-9a-f]{16}…$/,
    ],
    [
      "a release file missing",
      (dir) => rmSync(`${dir}/${RULES}`),
      false,
      /^benchmark\/rules_v0\.1\.txt: missing$/,
    ],
  ];

  for (const [what, edit, ok, line] of CASES)
    it(`${what}: ${ok === null ? "not checked" : ok ? "passes" : "fails, naming the file"}`, async () => {
      const dir = await bundle.copy();
      const check = checkData(readManifestOf(dir), release(edit));
      expect(check.name).toBe("data");
      expect(check.ok).toBe(ok);
      expect(check.lines.join("\n")).toMatch(line);
    });

  it("checks nothing, and passes nothing, for a bundle without a data stage", async () => {
    const dir = await bundle.copy((copy) =>
      editManifest(copy, (manifest) => {
        for (const stage of Object.values(manifest.stages))
          stage.kind = stage.kind === "download" ? "parse" : stage.kind;
      }),
    );
    expect(
      checkData(
        readManifestOf(dir),
        release(() => {}),
      ),
    ).toEqual({ name: "data", ok: null, lines: [] });
  });
});
