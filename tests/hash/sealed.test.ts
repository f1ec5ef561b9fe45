// A sealed file read back (src/hash/sealed.ts): readSealed, which reads and hashes a chunk at a time, gives
// what unseal() gives for the whole text, for every kind of file a cache folder may hold; it checks the
// seal against the file's bytes, so a damaged byte that decodes to the same text is refused too.
import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSealed, sealed, unseal } from "../../src/hash/sealed.js";

const CHUNK = 1 << 16;
const TAG_LINE = sealed("").length; // the seal's line, its newline included: where the body starts
/** A body whose 3-byte character straddles the first chunk's end, and a later one. */
const straddling = "a".repeat(CHUNK - TAG_LINE - 1) + "수술\n".repeat(40_000);
/** sealed("a\uFFFD") with the replacement character's 3 bytes damaged into one byte that decodes to it. */
const damagedToSameText = Buffer.concat([Buffer.from(sealed("a\uFFFD").slice(0, -1)), Buffer.from([0xff])]);

interface Case {
  name: string;
  text: string | Buffer;
  body: string | null;
  edited: RegExp | null;
  /** unseal() of the whole text, where it differs: it checks the decoded text. */
  unsealGives?: string;
}

const CASES: Case[] = [
  { name: "a small sealed body", text: sealed('{"a":1}'), body: '{"a":1}', edited: null },
  { name: "an empty sealed body", text: sealed(""), body: "", edited: null },
  {
    name: "many chunks, characters across their ends",
    text: sealed(straddling),
    body: straddling,
    edited: null,
  },
  { name: "no seal (an older format)", text: '{"version":3}\n', body: null, edited: null },
  { name: "an empty file", text: "", body: null, edited: null },
  { name: "half the tag", text: "medbench-sea", body: null, edited: null },
  {
    name: "half the tag as a line, then a large body",
    text: `medbench\n${straddling}`,
    body: null,
    edited: null,
  },
  { name: "an empty first line, then a large body", text: `\n${straddling}`, body: null, edited: null },
  { name: "the tag, no line's end", text: "medbench-sealed sha256:abc", body: null, edited: /has no seal/ },
  { name: "an edited body", text: sealed("one") + "!", body: null, edited: /does not match its seal/ },
  { name: "an edited seal", text: sealed("one").replace(/:./, ":x"), body: null, edited: /does not match/ },
  {
    name: "a large body cut short",
    text: sealed(straddling).slice(0, 100_000),
    body: null,
    edited: /does not match/,
  },
  {
    name: "bytes that are not UTF-8",
    text: Buffer.concat([Buffer.from(sealed("ok")), Buffer.from([0xff, 0xfe])]),
    body: null,
    edited: /does not match/,
  },
  {
    name: "a damaged byte that decodes to the text sealed",
    text: damagedToSameText,
    body: null,
    edited: /does not match/,
    unsealGives: "a\uFFFD",
  },
];

describe("readSealed", () => {
  const dir = mkdtempSync(join(tmpdir(), "medbench-sealed-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(CASES)("$name", ({ text, body, edited, unsealGives }) => {
    const file = join(dir, "file");
    writeFileSync(file, text);
    const told: string[] = [];
    expect(readSealed(file, (why) => told.push(why))).toBe(body);
    expect(told).toHaveLength(edited ? 1 : 0);
    if (edited) expect(told[0]).toMatch(edited);
    // The same verdict as unseal() of the whole text, where the text starts with the tag.
    const whole = readFileSync(file, "utf8");
    if (whole.startsWith("medbench-sealed sha256:")) {
      const opened = unseal(whole);
      expect("body" in opened ? opened.body : opened.problem).toBe(unsealGives ?? body ?? told[0]);
    }
  });

  it("is null for a file that is absent or a folder, and tells nothing", () => {
    mkdirSync(join(dir, "folder"));
    const told: string[] = [];
    expect(readSealed(join(dir, "absent"), (why) => told.push(why))).toBeNull();
    expect(readSealed(join(dir, "folder"), (why) => told.push(why))).toBeNull();
    expect(told).toEqual([]);
  });
});
