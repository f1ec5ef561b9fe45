// Every byte of a bundle is checked: removing, editing or adding any member fails `verify`, with
// the member named, also when the hashes the bundle records were rewritten to match the edit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { execa } from "execa";
import { Project, expectCleanFailure } from "../support/rig.js";

const RESULT = "results/kor-surgical-robot-voice-command/medbench_prior";
const sha = (t: string | Buffer) => createHash("sha256").update(t).digest("hex");

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
  let p: Project;
  let elsewhere: Project;
  let n = 0;
  beforeAll(async () => {
    p = new Project();
    await p.build();
    expect((await p.run(["export", RESULT, "-o", "bundle.tar.gz"])).exitCode).toBe(0);
    elsewhere = new Project(false); // no specs, no cache: the bundle alone
  });
  afterAll(() => {
    p.remove();
    elsewhere.remove();
  });

  /** A fresh copy of the bundle, tampered with by `edit` (given the copy's folder). */
  const tampered = async (edit: (dir: string) => void | Promise<void>) => {
    const dir = elsewhere.path(`t${n++}`);
    mkdirSync(dir);
    await execa("tar", ["xzf", p.path("bundle.tar.gz"), "-C", dir]);
    await edit(dir);
    return dir;
  };
  const json = (dir: string, f: string) => JSON.parse(readFileSync(`${dir}/${f}`, "utf8")) as Bundle;
  const editBundle = (dir: string, f: (b: Bundle) => void) => {
    const b = json(dir, "bundle.json");
    f(b);
    writeFileSync(`${dir}/bundle.json`, JSON.stringify(b, null, 2) + "\n");
  };
  const failures = async (dir: string, where: Project = elsewhere) => {
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
        const h = JSON.parse((await elsewhere.run(["hash", file, "--json"])).stdout).spec_hash as string;
        const old = json(d, "bundle.json").spec_hash;
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
    await execa("tar", ["czf", elsewhere.path("repacked.tar.gz"), "-C", dir, "."]);
    const r = await failures(elsewhere.path("repacked.tar.gz"));
    expect(r.text).toMatch(/notes\.html: not a member of a medbench bundle/);
    expect(r.exitCode).toBe(1);
  });

  it("flags a bundled spec that is not this project's published spec of the same version", async () => {
    const dir = await tampered(TAMPERS.find(([w]) => w.startsWith("the spec edited"))![1]);
    const r = await failures(dir, p);
    expect(r.text).toMatch(/local spec: specs\/voice-command\.yaml has another published spec/);
  });

  it("refuses to export a result whose build.json names another model", async () => {
    const file = `${RESULT}/build.json`;
    const pristine = p.read(file);
    p.write(file, pristine.replace('"model": "medbench/prior"', '"model": "openai/gpt-5"'));
    const r = await p.run(["export", RESULT, "-o", "forged.tar.gz"]);
    p.write(file, pristine);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      "build.json does not describe the build it names: stage " +
        'model was built with params model = "medbench/prior"',
    );
    expect(p.exists("forged.tar.gz")).toBe(false);
  });

  it("refuses to export a result whose prompt template changed since its build", async () => {
    const file = "specs/voice-command/prompts/system.txt";
    const pristine = p.read(file);
    p.write(file, "Answer in French.\n");
    const r = await p.run(["export", RESULT, "-o", "edited.tar.gz"]);
    p.write(file, pristine);
    expect(r.exitCode).toBe(2);
    expectCleanFailure(r.stderr);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`specs/voice-command/prompts/system\.txt is not the file stage prompts was built with ` +
          ".*; rebuild first",
      ),
    );
    expect(p.exists("edited.tar.gz")).toBe(false);
  });
});
