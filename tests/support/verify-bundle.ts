// A real bundle for the verify checks' tests: the voice-command task built with the built-in baseline and
// exported by the CLI (as tests/verify/verify.test.ts makes its own), then copies of it unpacked and edited,
// one per case.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { execa } from "execa";
import { expect } from "vitest";
import { Project } from "./rig.js";
import type { BundleManifest } from "../../src/bundle/layout.js";

export const RESULT = "results/kor-surgical-robot-voice-command/medbench_prior";
export const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

export interface ExportedBundle {
  /** The project that built and exported it (with specs/, the sample data and a cache). */
  built: Project;
  /** A project with nothing in it (or the shipped specs alone), where the copies are unpacked and
   *  verified. */
  elsewhere: Project;
  /** A fresh unpacked copy, edited by `edit` (given its folder); returns the folder. */
  copy(edit?: (dir: string) => void | Promise<void>): Promise<string>;
  remove(): void;
}

/** Builds and exports the bundle; call in beforeAll, and `remove()` in afterAll. `elsewhereSpecs`: the
 *  project of the copies holds the shipped specs (verify also compares the local spec). */
export async function exportedBundle(elsewhereSpecs = false): Promise<ExportedBundle> {
  const built = new Project();
  await built.build();
  const exported = await built.run(["export", RESULT, "-o", "bundle.tar.gz"]);
  expect(exported.exitCode, exported.stderr).toBe(0);
  const elsewhere = new Project(elsewhereSpecs);
  let copies = 0;
  return {
    built,
    elsewhere,
    async copy(edit) {
      const dir = elsewhere.path(`copy${copies++}`);
      mkdirSync(dir);
      await execa("tar", ["xzf", built.path("bundle.tar.gz"), "-C", dir]);
      await edit?.(dir);
      return dir;
    },
    remove() {
      built.remove();
      elsewhere.remove();
    },
  };
}

export const readManifestOf = <Manifest = BundleManifest>(dir: string) =>
  JSON.parse(readFileSync(`${dir}/bundle.json`, "utf8")) as Manifest;

/** Edits bundle.json of an unpacked copy in place (read as `Manifest`: a test may write any field). */
export function editManifest<Manifest = BundleManifest>(
  dir: string,
  edit: (manifest: Manifest) => void,
): void {
  const manifest = readManifestOf<Manifest>(dir);
  edit(manifest);
  writeFileSync(`${dir}/bundle.json`, JSON.stringify(manifest, null, 2) + "\n");
}

/** Replaces text in a member of an unpacked copy (the replacement must apply). */
export function editMember(dir: string, member: string, from: string | RegExp, to: string): void {
  const file = `${dir}/${member}`;
  const text = readFileSync(file, "utf8");
  const edited = text.replace(from, to);
  expect(edited, `the edit of ${member} applies`).not.toBe(text);
  writeFileSync(file, edited);
}

/** `verify --json` of a copy in the empty project: the exit code and the report. */
export async function verifyJson(bundle: ExportedBundle, dir: string, ...args: string[]) {
  const run = await bundle.elsewhere.run(["verify", dir, "--json", ...args]);
  const report = run.stdout.trim()
    ? (JSON.parse(run.stdout.trim().split("\n").pop()!) as {
        ok: boolean;
        checks: { name: string; ok: boolean | null; lines: string[] }[];
        differences: { what: string; published: unknown; recomputed: unknown }[];
      })
    : null;
  return { exitCode: run.exitCode, stderr: run.stderr, report };
}
