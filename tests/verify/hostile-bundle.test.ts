// A bundle is untrusted input: verify reads nothing outside its own temp folder, and a bundle
// that is too large, has too many members, holds links or paths that climb out, or carries fields this
// medbench does not know is refused before it is read, with the figure or the name it broke.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, readdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { gzipSync } from "node:zlib";
import { execa } from "execa";
import { Header } from "tar";
import { Project, expectCleanFailure } from "../support/rig.js";
import {
  editManifest as editManifestOf,
  exportedBundle,
  type ExportedBundle,
} from "../support/verify-bundle.js";

const SECRET = "token-kubeconfig-7f3a9c";
const GiB = 1024 * 1024 * 1024;

/** A .tar.gz made by hand: each entry's header as given (its claimed size), with `data` bytes after it. */
function handMadeTar(entries: { path: string; size: number; type?: string; data?: Buffer }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const h = new Header({
      path: e.path,
      size: e.size,
      type: (e.type ?? "File") as "File",
      mode: 0o644,
      mtime: new Date(0),
      ...(e.type === "SymbolicLink" ? { linkpath: "/etc/hostname" } : {}),
    });
    const block = Buffer.alloc(512);
    h.encode(block);
    blocks.push(block);
    const data = e.data ?? Buffer.alloc(0);
    blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

// The bundle the cases edit, built and exported once. Its copies are verified in a project with the shipped
// specs (verify also diffs the local spec) and a file holding a secret that no refusal may show.
let bundle: ExportedBundle;
beforeAll(async () => {
  bundle = await exportedBundle(true);
  bundle.elsewhere.write(
    "kubeconfig.yaml",
    `slug: kor-surgical-robot-voice-command\nusers:\n  - token: ${SECRET}\n`,
  );
});
afterAll(() => bundle.remove());

/** A copy of the bundle unpacked, edited by `edit` (given its folder); returns the folder. */
const unpacked = (edit: (dir: string) => void) => bundle.copy(edit);
/** bundle.json of a copy edited as plain JSON: any field, known or not. */
const editManifest = (dir: string, edit: (manifest: Record<string, unknown>) => void) =>
  editManifestOf<Record<string, unknown>>(dir, edit);

describe("verify refuses a hostile bundle before reading it", () => {
  /** Verify of a folder and of the same folder packed: refused (exit 2) with `message`, nothing leaked. */
  const refused = async (dir: string, message: RegExp) => {
    await execa("tar", ["czf", `${dir}.tar.gz`, "-C", dir, "."]);
    for (const target of [dir, `${dir}.tar.gz`]) {
      for (const json of [[], ["--json"]]) {
        const r = await bundle.elsewhere.run(["verify", target, ...json]);
        expectCleanFailure(r.stderr);
        expect(r.exitCode, r.stdout + r.stderr).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stdout + r.stderr).not.toContain(SECRET);
        expect(r.stdout).not.toContain("verified: the published result is reproduced");
      }
    }
  };

  it("passes the bundle as exported", async () => {
    const r = await bundle.elsewhere.run(["verify", bundle.built.path("bundle.tar.gz")]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
  });

  it("refuses a spec path that climbs out of the bundle (it never parses the file there)", async () => {
    const dir = await unpacked((d) =>
      editManifest(
        d,
        (b) => void (b.spec = relative(`${d}/spec`, bundle.elsewhere.path("kubeconfig.yaml"))),
      ),
    );
    await refused(dir, /bundle\.json spec "\.\.\/.*kubeconfig\.yaml" has an empty, `\.` or `\.\.` segment/);
  });

  it("refuses an absolute spec path", async () => {
    const dir = await unpacked((d) =>
      editManifest(d, (b) => void (b.spec = bundle.elsewhere.path("kubeconfig.yaml"))),
    );
    await refused(dir, /bundle\.json spec ".*kubeconfig\.yaml" is absolute/);
  });

  it("refuses a stage name with ../ (it never hashes a file outside)", async () => {
    const dir = await unpacked((d) =>
      editManifest(d, (b) => {
        const stages = b.stages as Record<string, unknown>;
        stages["../../../kubeconfig.yaml"] = stages.parse;
        delete stages.parse;
      }),
    );
    await refused(dir, /stage name "\.\.\/\.\.\/\.\.\/kubeconfig\.yaml" holds a path separator/);
  });

  it("refuses a results file or an output name that climbs out", async () => {
    const results = await unpacked((d) =>
      editManifest(
        d,
        (b) => void ((b.results as Record<string, string>)["../../kubeconfig.yaml"] = "parse/x"),
      ),
    );
    await refused(
      results,
      /results file "\.\.\/\.\.\/kubeconfig\.yaml" has an empty, `\.` or `\.\.` segment/,
    );
    const output = await unpacked((d) =>
      editManifest(d, (b) => {
        const st = (b.stages as Record<string, { outputs: Record<string, string> }>).parse!;
        st.outputs[".."] = "0".repeat(64);
      }),
    );
    await refused(output, /stage parse output "\.\." is `\.` or `\.\.`/);
  });

  it("refuses an unknown top-level field of bundle.json (a pad, a note) rather than verify it", async () => {
    const dir = await unpacked((d) =>
      editManifest(d, (b) => void (b.note = "<html><script>alert(1)</script></html>")),
    );
    await refused(dir, /bundle\.json has an unknown field "note"/);
  });

  it("refuses a link inside the bundle, packed or as a folder", async () => {
    const dir = await unpacked((d) =>
      symlinkSync(bundle.elsewhere.path("kubeconfig.yaml"), `${d}/results/notes.yaml`),
    );
    await refused(dir, /member results\/notes\.yaml is a (SymbolicLink|link), not a plain file or folder/);
  });

  const tarRefused = async (name: string, tar: Buffer, message: RegExp) => {
    bundle.elsewhere.write(name, tar);
    const r = await bundle.elsewhere.run(["verify", name]);
    expectCleanFailure(r.stderr);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    // Nothing left behind in the project's cache/tmp.
    expect(
      bundle.elsewhere.exists("cache/tmp") ? readdirSync(bundle.elsewhere.path("cache/tmp")) : [],
    ).toEqual([]);
  };

  it("refuses a member larger than 256 MiB from its header, before unpacking it", async () => {
    await tarRefused(
      "big-member.tar.gz",
      handMadeTar([{ path: "outputs/parse/replies", size: GiB }]),
      /member outputs\/parse\/replies is larger than 256 MiB/,
    );
  });

  it("refuses members that together pass 1024 MiB, and a folder's member larger than 256 MiB", async () => {
    // Sparse files: their sizes without their bytes, so that the test writes next to nothing.
    const sparse = (f: string, size: number) => {
      writeFileSync(f, "");
      truncateSync(f, size);
    };
    const total = await unpacked((d) => {
      for (let i = 0; i < 5; i++) sparse(`${d}/results/m${i}`, 250 * 1024 * 1024);
    });
    const r = await bundle.elsewhere.run(["verify", total]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/its members together are larger than 1024 MiB/);
    const big = await unpacked((d) => sparse(`${d}/results/big`, GiB));
    const s = await bundle.elsewhere.run(["verify", big]);
    expect(s.exitCode, s.stderr).toBe(2);
    expect(s.stderr).toMatch(/member results\/big is larger than 256 MiB/);
  });

  it("refuses a bundle.json larger than 16 MiB", async () => {
    await tarRefused(
      "big-manifest.tar.gz",
      handMadeTar([{ path: "bundle.json", size: 17 * 1024 * 1024 }]),
      /bundle\.json is larger than 16 MiB/,
    );
  });

  it("refuses more than 5000 members", async () => {
    const entries = Array.from({ length: 5001 }, (_, i) => ({ path: `results/n${i}`, size: 0 }));
    await tarRefused("many.tar.gz", handMadeTar(entries), /it has more than 5000 members/);
  });

  it("refuses an archive member that climbs out or is a link", async () => {
    await tarRefused(
      "climb.tar.gz",
      handMadeTar([{ path: "../../escape.txt", size: 2, data: Buffer.from("hi") }]),
      /member "\.\.\/\.\.\/escape\.txt" has an empty, `\.` or `\.\.` segment/,
    );
    await tarRefused(
      "link.tar.gz",
      handMadeTar([{ path: "results/notes", size: 0, type: "SymbolicLink" }]),
      /member results\/notes is a SymbolicLink, not a plain file or folder/,
    );
  });
});

describe("verify of a bundle within the limits whose records are not valid", () => {
  /** The bundle unpacked to a folder, edited, and packed again: both are verified. */
  const edited = async (edit: (dir: string) => void) => {
    const dir = await unpacked(edit);
    await execa("tar", ["czf", `${dir}.tar.gz`, "-C", dir, "."]);
    return [dir, `${dir}.tar.gz`];
  };
  /** Verify of each target in the project that built the bundle: refused (exit 2) with `message`. */
  const refusedBoth = async (targets: string[], message: RegExp) => {
    for (const target of targets) {
      const r = await bundle.built.run(["verify", target]);
      expectCleanFailure(r.stderr);
      expect(r.exitCode, r.stdout + r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  };

  it("a replies line cut short: refused, naming the member and the line", async () => {
    let line = 0;
    const targets = await edited((d) => {
      const file = `${d}/outputs/model/replies`;
      const cut = readFileSync(file).subarray(0, -40);
      writeFileSync(file, cut);
      line = cut.toString("utf8").split("\n").length;
    });
    await refusedBoth(targets, new RegExp(`outputs/model/replies line ${line} is not a JSON record`));
  });

  it("requests that are not JSON: refused, naming the member and the line", async () => {
    const targets = await edited((d) => writeFileSync(`${d}/outputs/prompts/requests`, "not json\n"));
    await refusedBoth(
      targets,
      /stage parse stopped: outputs\/prompts\/requests line 1 is not a JSON record/,
    );
  });

  it("a member that is a file and also a folder, in either order: refused, named", async () => {
    const file = { path: "outputs/model/replies", size: 3, data: Buffer.from("{}\n") };
    const inside = { path: "outputs/model/replies/x", size: 3, data: Buffer.from("{}\n") };
    for (const [name, entries] of [
      ["file-first.tar.gz", [file, inside]],
      ["folder-first.tar.gz", [inside, file]],
      ["twice.tar.gz", [file, file]],
    ] as const) {
      bundle.built.write(name, handMadeTar([...entries]));
      const r = await bundle.built.run(["verify", name]);
      expectCleanFailure(r.stderr);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/member outputs\/model\/replies (is both a file and a folder|appears twice)/);
      expect(r.stderr).not.toContain("/tmp/");
    }
  });

  it("a slug or a member name with escape sequences is shown escaped, never obeyed", async () => {
    const fake = "\x1b[2J\x1b[H\x1b[32mALL CLEAR\x1b[0m\r\n\u009b2J";
    const targets = await edited((d) => editManifest(d, (b) => void (b.slug = fake)));
    const named = bundle.built.path("named.tar.gz");
    writeFileSync(named, handMadeTar([{ path: `results/${fake}`, size: 2, data: Buffer.from("{}") }]));
    for (const target of [...targets, named])
      for (const json of [[], ["--json"]]) {
        const r = await bundle.built.run(["verify", target, ...json]);
        expectCleanFailure(r.stderr);
        expect(r.exitCode).not.toBe(0);
        const shown = r.stdout + r.stderr;
        expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
        expect(shown).not.toMatch(/^ALL CLEAR/m);
        expect(shown).toMatch(/\\x1b\[2J|\\u001b\[2J/);
      }
  });
});

describe("a partial run is never verified as the published result", () => {
  it("exports --limit 2 with a warning, and verify says partial, exit 1", async () => {
    const p = new Project();
    try {
      const built = await p.build(["--limit", "2"]);
      expect(built.summary.results).toMatch(/\.partial$/);
      const exported = await p.run(["export", built.summary.results, "-o", "partial.tar.gz"]);
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect(exported.stderr).toMatch(/warning: a partial run/);
      const r = await p.run(["verify", "partial.tar.gz"]);
      expectCleanFailure(r.stderr);
      expect(r.exitCode, r.stdout).toBe(1);
      expect(r.stdout).toMatch(/FAIL partial: a partial run \(--limit 2\)/);
      expect(r.stdout).toMatch(/NOT verified as a published result: a partial run/);
      expect(r.stdout).not.toContain("the published result is reproduced");
      const json = JSON.parse((await p.run(["verify", "partial.tar.gz", "--json"])).stdout) as {
        ok: boolean;
        checks: { name: string; ok: boolean | null }[];
      };
      expect(json.ok).toBe(false);
      expect(json.checks.filter((c) => c.ok === false).map((c) => c.name)).toEqual(["partial"]);
    } finally {
      p.remove();
    }
  });
});
