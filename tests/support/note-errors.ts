// What the note-errors tests through the CLI share (tests/tasks/note-errors-build.test.ts,
// tests/tasks/note-errors-privacy.test.ts): the shipped synthetic sample's test pairs and their counts, a
// project whose route `fake` is the fake server under the note-errors policy, a bundle unpacked, and the
// outputs a bundle of the task withholds.
import { afterAll, beforeAll } from "vitest";
import { mkdirSync, readFileSync } from "node:fs";
import { execa } from "execa";
import { Project } from "./rig.js";
import { REPO } from "./helpers.js";
import { fakeRoute, startFake, type Fake } from "./fake.js";

export const SPEC = "specs/note-errors.yaml";

export interface SamplePair {
  pair_id: string;
  error_note: string;
  clean_note: string;
  edits: { line: string }[];
}

/** The test pairs of the sample shipped with the spec (specs/note-errors/sample/). */
export const samplePairs = (): SamplePair[] =>
  readFileSync(`${REPO}/specs/note-errors/sample/pairs_test.jsonl`, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as SamplePair);

/** How many pairs the sample holds, and notes (a pair is an error note and its clean twin). */
export const SAMPLE_PAIRS = samplePairs().length;
export const SAMPLE_NOTES = 2 * SAMPLE_PAIRS;

/** The outputs a note-errors bundle withholds (they hold or quote notes). */
export const WITHHELD_OUTPUTS = [
  "fit/fit",
  "model/replies",
  "parse/parsed",
  "prompts/requests",
  // The override's validation on train notes: its requests hold train notes, its replies quote them.
  "validation_model/replies",
  "validation_parse/parsed",
  "validation_prompts/requests",
];

/** A project whose routes.yaml sends route `fake` to the fake server under the note-errors policy, made
 *  before the describe's tests and removed after them (read `p` and `fake` inside a test). */
export function noteErrorsAgainstFake(): { p: Project; fake: Fake } {
  const made = {} as { p: Project; fake: Fake };
  beforeAll(async () => {
    made.fake = await startFake({ policy: "note-errors" });
    made.p = new Project();
    made.p.write("routes.yaml", `routes:\n${fakeRoute("fake", made.fake.url)}`);
  });
  afterAll(async () => {
    await made.fake.close();
    made.p.remove();
  });
  return made;
}

/** The bundle `tarball` of project `p` unpacked into its new folder `folder`; returns the folder's path. */
export async function unpacked(p: Project, tarball: string, folder: string): Promise<string> {
  const dir = p.path(folder);
  mkdirSync(dir);
  await execa("tar", ["xzf", p.path(tarball), "-C", dir]);
  return dir;
}
