// Every byte of a bundle is checked: removing, editing or adding any member fails `verify`, with
// the member named, also when the hashes the bundle records were rewritten to match the edit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { execa } from "execa";
import { Project, expectCleanFailure } from "../support/rig.js";
import {
  editManifest,
  exportedBundle,
  readManifestOf,
  RESULT,
  sha,
  type ExportedBundle,
} from "../support/verify-bundle.js";

type Bundle = {
  spec_hash: string;
  variables: Record<string, unknown>;
  pins: Record<string, Record<string, string>>;
  stages: Record<
    string,
    { key: string; outputs: Record<string, string>; record: { params: Record<string, unknown> } }
  >;
};

describe("verify checks every member of a bundle", () => {
  // The bundle's copies are verified in a project with no specs and no cache: the bundle alone.
  let bundle: ExportedBundle;
  beforeAll(async () => {
    bundle = await exportedBundle();
  });
  afterAll(() => bundle.remove());

  /** A fresh copy of the bundle, tampered with by `edit` (given the copy's folder). */
  const tampered = (edit: (dir: string) => void | Promise<void>) => bundle.copy(edit);
  const editBundle = (dir: string, edit: (b: Bundle) => void) => editManifest<Bundle>(dir, edit);
  const failures = async (dir: string, where: Project = bundle.elsewhere) => {
    const r = await where.run(["verify", dir, "--json"]);
    expectCleanFailure(r.stderr);
    const rep = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: { name: string; ok: boolean; lines: string[] }[];
    };
    return {
      exitCode: r.exitCode,
      ok: rep.ok,
      text: rep.checks
        .filter((c) => c.ok === false)
        .map((c) => `${c.name}: ${c.lines.join("\n")}`)
        .join("\n"),
    };
  };

  it("passes the bundle as exported", async () => {
    const r = await failures(await tampered(() => {}));
    expect(r.text).toBe("");
    expect(r.exitCode).toBe(0);
  });

  const TAMPERS: [string, (dir: string) => void | Promise<void>, RegExp][] = [
    [
      "a stage key edited in bundle.json",
      (d) => editBundle(d, (b) => void (b.stages.parse!.key = sha("forged"))),
      /stage parse: its key [0-9a-f]{12}… is not the hash of its record/,
    ],
    [
      "a stage record edited in bundle.json",
      (d) => editBundle(d, (b) => void (b.stages.score!.record.params.slot_compare = "exact")),
      /stage score: params\.slot_compare is "exact" in its record, "casefold" from the spec/,
    ],
    [
      "a stage's key record file edited",
      (d) => {
        const f = `${d}/stages/bootstrap.json`;
        writeFileSync(f, readFileSync(f, "utf8").replace('"resamples": 1000', '"resamples": 10'));
      },
      /stages\/bootstrap\.json: differs from stage bootstrap in bundle\.json/,
    ],
    [
      "the lock entry edited",
      (d) => {
        const f = `${d}/lock.json`;
        const lock = JSON.parse(readFileSync(f, "utf8"));
        lock["specs/voice-command.yaml"].stages.model.key = sha("forged");
        writeFileSync(f, JSON.stringify(lock, null, 2) + "\n");
      },
      /lock\.json: differs from the lock entry bundle\.json gives/,
    ],
    [
      "results/items.jsonl removed",
      (d) => rmSync(`${d}/results/items.jsonl`),
      /results\/items\.jsonl: missing from the bundle/,
    ],
    [
      "a prompt template removed",
      (d) => rmSync(`${d}/spec/specs/voice-command/prompts/user.txt`),
      /spec\/specs\/voice-command\/prompts\/user\.txt: missing from the bundle/,
    ],
    [
      "a prompt template edited",
      (d) => writeFileSync(`${d}/spec/specs/voice-command/prompts/system.txt`, "Answer in French.\n"),
      /spec\/specs\/voice-command\/prompts\/system\.txt: not the file stage prompts was built with/,
    ],
    [
      "an HTML file added",
      (d) => writeFileSync(`${d}/results/index.html`, "<script>alert(1)</script>"),
      /results\/index\.html: not a member of a medbench bundle/,
    ],
    [
      "an output added to a stage",
      (d) => writeFileSync(`${d}/outputs/model/extra`, "{}"),
      /outputs\/model\/extra: not a member of a medbench bundle/,
    ],
    [
      "the pins edited",
      (d) =>
        editBundle(d, (b) => {
          const src = Object.keys(b.pins)[0]!;
          b.pins[src]!["benchmark/rules_v0.1.txt"] = sha("other rules");
        }),
      /bundle\.json pins\..*rules_v0\.1\.txt: "[0-9a-f]{64}", the bundled spec gives "[0-9a-f]{64}"/,
    ],
    [
      "the model name changed in the bundle's variables",
      (d) => editBundle(d, (b) => void (b.variables.model = "openai/gpt-5")),
      /stage model: params\.model is "medbench\/prior" in its record, "openai\/gpt-5" from the spec/,
    ],
    [
      "the spec edited, with every recorded spec_hash rewritten to match",
      async (d) => {
        const file = `${d}/spec/specs/voice-command.yaml`;
        writeFileSync(
          file,
          readFileSync(file, "utf8")
            .replace(/(\n\s+request:\n(?:.*\n)*?\s+max_tokens: )800\n/, "$11024\n")
            .replace(/^spec_hash: .*\n/m, ""),
        );
        const hashed = await bundle.elsewhere.run(["hash", file, "--json"]);
        const h = JSON.parse(hashed.stdout).spec_hash as string;
        const old = readManifestOf(d).spec_hash;
        expect(h).not.toBe(old);
        writeFileSync(file, readFileSync(file, "utf8").replace(/^(slug: .*\n)/m, `$1spec_hash: ${h}\n`));
        const metrics = readFileSync(`${d}/outputs/bootstrap/metrics`, "utf8").replaceAll(old, h);
        writeFileSync(`${d}/outputs/bootstrap/metrics`, metrics);
        writeFileSync(`${d}/results/metrics.json`, metrics);
        editBundle(d, (b) => {
          b.spec_hash = h;
          b.stages.bootstrap!.outputs.metrics = sha(metrics);
        });
      },
      /stage model: params\.max_tokens is 800 in its record, 1024 from the spec/,
    ],
  ];

  for (const [what, edit, named] of TAMPERS)
    it(`fails ${what}, naming it`, async () => {
      const r = await failures(await tampered(edit));
      expect(r.text).toMatch(named);
      expect(r.ok).toBe(false);
      expect(r.exitCode).toBe(1);
    });

  it("names a member added to the tarball itself", async () => {
    const dir = await tampered((d) => writeFileSync(`${d}/notes.html`, "<p>hi</p>"));
    await execa("tar", ["czf", bundle.elsewhere.path("repacked.tar.gz"), "-C", dir, "."]);
    const r = await failures(bundle.elsewhere.path("repacked.tar.gz"));
    expect(r.text).toMatch(/notes\.html: not a member of a medbench bundle/);
    expect(r.exitCode).toBe(1);
  });

  it("flags a bundled spec that is not this project's published spec of the same version", async () => {
    const dir = await tampered(TAMPERS.find(([w]) => w.startsWith("the spec edited"))![1]);
    const r = await failures(dir, bundle.built);
    expect(r.text).toMatch(/local spec: specs\/voice-command\.yaml has another published spec/);
  });

  /** Export of the result with `file` of the built project edited (restored after): refused, exit 2, and
   *  no bundle written; returns the run. */
  const exportEdited = async (file: string, edit: (text: string) => string, tarball: string) => {
    const p = bundle.built;
    const pristine = p.read(file);
    p.write(file, edit(pristine));
    const r = await p.run(["export", RESULT, "-o", tarball]);
    p.write(file, pristine);
    expect(r.exitCode).toBe(2);
    expect(p.exists(tarball)).toBe(false);
    return r;
  };

  it("refuses to export a result whose build.json names another model", async () => {
    const forge = (text: string) => text.replace('"model": "medbench/prior"', '"model": "openai/gpt-5"');
    const r = await exportEdited(`${RESULT}/build.json`, forge, "forged.tar.gz");
    expect(r.stderr).toMatch(
      "build.json does not describe the build it names: stage " +
        'model was built with params model = "medbench/prior"',
    );
  });

  it("refuses to export a result whose prompt template changed since its build", async () => {
    const file = "specs/voice-command/prompts/system.txt";
    const r = await exportEdited(file, () => "Answer in French.\n", "edited.tar.gz");
    expectCleanFailure(r.stderr);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`specs/voice-command/prompts/system\.txt is not the file stage prompts was built with ` +
          ".*; rebuild first",
      ),
    );
  });
});
