// A public bundle of note-errors (a private release) holds no span of a test note and no unkeyed hash of
// one, and still verifies. The run is against the fake OpenAI-compatible server, whose replies quote a line
// of the note in their Evidence (mostly the edited line) and reason in think blocks and reasoning fields;
// every member of the exported bundle, every string inside its JSON, the raw tar stream and the results
// folder are scanned for every edited test-note line and for the sha256 of every private text the run
// handled.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { join } from "node:path";
import {
  noteErrorsAgainstFake,
  samplePairs as pairs,
  SPEC,
  unpacked as unpackedIn,
  WITHHELD_OUTPUTS,
} from "../support/note-errors.js";
// @ts-expect-error: a plain ESM script, also run by hand
import { noteErrorsPolicy } from "../../scripts/fake-policies/note-errors.mjs";
import { requestKey } from "../../src/model/openai.js";

const DIR = "results/syn-snuh-note-errors/fake_nurse-7b/neutral-greedy";
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** Each edited line of each test note (both sides), without its `P:` label. */
function editedLines(): string[] {
  const out = new Set<string>();
  for (const p of pairs())
    for (const e of p.edits)
      for (const note of [p.error_note, p.clean_note]) {
        const line = note.split("\n").find((l) => l.startsWith(`${e.line}:`));
        if (line) out.add(line.slice(e.line.length + 1).trim());
      }
  return [...out];
}

/** Every string value inside a JSON document (or each line of a JSON Lines file), decoded. */
function strings(text: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.entries(v).forEach(([k, x]) => (out.push(k), walk(x)));
  };
  const docs = (() => {
    try {
      return [JSON.parse(text) as unknown];
    } catch {
      return text.split("\n").flatMap((l) => {
        try {
          return [JSON.parse(l) as unknown];
        } catch {
          return [];
        }
      });
    }
  })();
  docs.forEach(walk);
  return out;
}

function filesUnder(dir: string, rel = ""): string[] {
  return readdirSync(join(dir, rel)).flatMap((n) => {
    const p = rel ? `${rel}/${n}` : n;
    return statSync(join(dir, p)).isDirectory() ? filesUnder(dir, p) : [p];
  });
}

describe("note-errors: a public bundle leaks no test note", () => {
  const made = noteErrorsAgainstFake();

  it("exports no edited line and no hash of a note, a request or a reply, and verifies", async () => {
    const { p, fake } = made;
    const built = await p.run(["build", SPEC, "--model", "fake/nurse-7b", "--registry", "routes.yaml"]);
    // Incomplete (exit 1): the policy fails about 3 % of the notes for good; results are written.
    expect(built.exitCode, built.stderr).toBe(1);
    expect(built.stderr).toContain("the build is incomplete");
    const r = await p.run(["export", DIR, "-o", "public.tar.gz"]);
    expect(r.exitCode, r.stderr).toBe(0);

    // What the run handled that is private: the notes, their lines, each request and each reply.
    const lines = editedLines();
    const policy = noteErrorsPolicy() as (b: unknown) => string | { content?: string };
    const bodies = fake.stats.received.map((x) => x.body as { messages: { content: string }[] });
    const replies = bodies.map((b) => {
      const out = policy(b);
      return typeof out === "string" ? out : (out.content ?? "");
    });
    // The scan has something to find: the replies the server sent quote edited lines.
    const quoted = lines.filter((l) => replies.some((t) => t.includes(l)));
    expect(quoted.length).toBeGreaterThan(10);
    const privateTexts = [
      ...pairs().flatMap((x) => [x.error_note, x.clean_note, ...x.error_note.split("\n")]),
      ...pairs().flatMap((x) => x.clean_note.split("\n")),
      ...lines,
      ...bodies.flatMap((b) => b.messages.map((m) => m.content)),
      ...replies,
      ...bodies.map((b) => JSON.stringify(b)),
    ];
    const hashes = [
      // An empty text's hash tells nothing (and is every empty output's, e.g. a validation that sent
      // nothing).
      ...privateTexts.filter((text) => text !== "").map(sha),
      // request_sha256 as the model stage computes it: {base_url, model, body}
      ...bodies.map((b) => requestKey({ base_url: fake.url } as never, b as never)),
    ];

    const unpacked = await unpackedIn(p, "public.tar.gz", "public");
    const members = filesUnder(unpacked);
    expect(members).toContain("outputs/score/items");
    for (const withheld of ["outputs/model/replies", "outputs/parse/parsed", "outputs/prompts/requests"])
      expect(members).not.toContain(withheld);
    const manifest = JSON.parse(readFileSync(`${unpacked}/bundle.json`, "utf8"));
    expect(manifest.withheld.outputs).toEqual(WITHHELD_OUTPUTS);

    const scanned: [string, string][] = [
      ["the tar stream", gunzipSync(readFileSync(p.path("public.tar.gz"))).toString("utf8")],
      ...members.map((m): [string, string] => [m, readFileSync(join(unpacked, m), "utf8")]),
      ...members.flatMap((m) =>
        strings(readFileSync(join(unpacked, m), "utf8")).map((s): [string, string] => [
          `${m} (a string)`,
          s,
        ]),
      ),
      // The results folder is published too.
      ...filesUnder(p.path(DIR)).map((f): [string, string] => [`${DIR}/${f}`, p.read(`${DIR}/${f}`)]),
    ];
    const found: string[] = [];
    for (const [where, text] of scanned) {
      for (const l of lines) if (text.includes(l)) found.push(`${where}: line ${l}`);
      for (const h of hashes) if (text.includes(h.slice(0, 16))) found.push(`${where}: hash ${h}`);
    }
    expect(found).toEqual([]);
    expect(p.exists(`${DIR}/replies.jsonl`)).toBe(false);

    // It verifies: score and bootstrap again from the items, every other member against its hash.
    const ok = await p.run(["verify", "public.tar.gz", "--json"]);
    expect(ok.exitCode, ok.stdout + ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout) as {
      checks: { name: string; ok: boolean | null; lines: string[] }[];
    };
    const replay = report.checks.find((c) => c.name === "replay")!;
    expect(replay.lines[0]).toMatch(
      /^score, validation_score, bootstrap recomputed from the bundled items .*identical/,
    );
    expect(replay.lines).toContain(
      "parse not replayed: its outputs are withheld from the bundle (a private release)",
    );
  });
});
