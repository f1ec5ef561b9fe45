// What a build keeps in memory that it has no use for (docs/performance.md, "Peak memory of a first
// build"): each case runs the built module in a Node process of its own under --expose-gc, so that a
// collection before the figure leaves only what is still referenced, and nothing else the test runner holds
// is counted.
import { execa } from "execa";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { writeRecordsFile, type ReplyRecord } from "../../src/contract/records.js";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/helpers.js";
import { syntheticReply } from "../support/walked.js";

const DIST = join(REPO, "dist/src");

/** The JSON a program prints as its last line, run with the built modules' folder in DIST. */
async function run(program: string): Promise<Record<string, unknown>> {
  const r = await execa("node", ["--expose-gc", "-e", program], { env: { DIST } });
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, unknown>;
}

describe("memory a build holds", () => {
  it("keeps a module's import names, not the module's text they were found in", async () => {
    // V8 makes a substring of 13 characters or more a slice of its string: kept, it keeps the whole text.
    const out = await run(`
      const { importsIn } = require(process.env.DIST + "/runner/code/code.js");
      const used = () => (gc(), require("node:v8").getHeapStatistics().used_heap_size);
      const names = () =>
        importsIn("// " + "x".repeat(8e6) + '\\nrequire("./a-module-named-at-length.js");\\n');
      const before = used();
      const kept = names();
      /a/.test("a"); // V8 keeps the last subject a regexp matched (RegExp.input): now another one
      console.log(JSON.stringify({ kept, grewMB: (used() - before) / 2 ** 20 }));`);
    expect(out.kept).toEqual(["./a-module-named-at-length.js"]);
    expect(out.grewMB).toBeLessThan(1); // the text is 8 MB
  });

  it("notes a consulted path's stat signature, not the Stats object (and its four Dates)", async () => {
    const out = await run(`
      const { statSync } = require("node:fs");
      const { consult, consultedPaths } = require(process.env.DIST + "/util/consulted.js");
      const path = require.resolve(process.env.DIST + "/util/consulted.js");
      let st = statSync(path);
      const ref = new WeakRef(st);
      const signature = [st.size, st.mtimeMs, st.ctimeMs, st.ino];
      consult(path, st);
      st = null;
      // A WeakRef holds its target until the job that made it ends.
      setImmediate(() => {
        gc();
        const noted = consultedPaths().get(path);
        console.log(JSON.stringify({ statKept: ref.deref() !== undefined, noted, signature }));
      });`);
    expect(out.statKept).toBe(false);
    expect(out.noted).toEqual(out.signature);
  });

  it("copies objects into results a small chunk at a time, not a megabyte each", async () => {
    const out = await run(`
      const { mkdtempSync } = require("node:fs");
      const { join } = require("node:path");
      const { tmpdir } = require("node:os");
      const { Cache } = require(process.env.DIST + "/runner/store/cache.js");
      const dir = mkdtempSync(join(tmpdir(), "medbench-held-"));
      const cache = new Cache(join(dir, "cache"));
      const hashes = [1, 2, 3, 4].map((i) => cache.put(String(i).repeat(3 * 2 ** 20)));
      gc();
      const before = process.memoryUsage().arrayBuffers;
      hashes.forEach((hash, i) => cache.copyTo(hash, join(dir, "copy-" + i)));
      const grewMB = (process.memoryUsage().arrayBuffers - before) / 2 ** 20;
      require("node:fs").rmSync(dir, { recursive: true, force: true });
      console.log(JSON.stringify({ grewMB }));`);
    expect(out.grewMB).toBeLessThan(1); // a new 1 MB chunk per copy: 4 MB
  });

  it("hashes files through one chunk buffer, not a new megabyte each", async () => {
    const out = await run(`
      const { mkdtempSync, writeFileSync, rmSync } = require("node:fs");
      const { join } = require("node:path");
      const { tmpdir } = require("node:os");
      const { createHash } = require("node:crypto");
      const { sha256FileSync } = require(process.env.DIST + "/hash/sha256.js");
      const dir = mkdtempSync(join(tmpdir(), "medbench-held-"));
      const files = [1, 2, 3, 4, 5, 6].map((i) => join(dir, "f" + i));
      files.forEach((file, i) => writeFileSync(file, String(i).repeat(3000)));
      sha256FileSync(files[0]);
      gc();
      const before = process.memoryUsage().arrayBuffers;
      const hashes = files.map((file) => sha256FileSync(file));
      const grewMB = (process.memoryUsage().arrayBuffers - before) / 2 ** 20;
      // A hash started while another reads its chunks (from \`each\`) has a buffer of its own.
      let inner = "";
      let seen = "";
      const outer = sha256FileSync(files[0], (chunk) => {
        inner ||= sha256FileSync(files[1]);
        seen += chunk.toString(); // the outer file's chunk still, after the inner hash read its own
      });
      const sha = (text) => createHash("sha256").update(text).digest("hex");
      const expected = files.map((_, i) => sha(String(i).repeat(3000)));
      rmSync(dir, { recursive: true, force: true });
      console.log(JSON.stringify({ grewMB, hashes, expected, nested: [outer, inner, sha(seen)] }));`);
    expect(out.grewMB).toBeLessThan(1); // a new 1 MB buffer per file: 6 MB
    expect(out.hashes).toEqual(out.expected);
    const [first, second] = out.expected as string[];
    expect(out.nested).toEqual([first, second, first]);
  });

  it("reads a sealed file 64 KB at a time, never whole", async () => {
    // A whole read of a 370 KB code memo, freed, raised glibc's threshold for memory it hands back: a first
    // build peaked 5 MB higher. Node's own reads are watched from before the module loads.
    const out = await run(`
      const fs = require("node:fs");
      const reads = [];
      const wholeReads = [];
      const { readSync, readFileSync } = fs;
      fs.readSync = (fd, buffer, offset, length, position) =>
        (reads.push(length), readSync(fd, buffer, offset, length, position));
      fs.readFileSync = (file, ...rest) => (wholeReads.push(String(file)), readFileSync(file, ...rest));
      const { join } = require("node:path");
      const { sealed, readSealed } = require(process.env.DIST + "/hash/sealed.js");
      const dir = fs.mkdtempSync(join(require("node:os").tmpdir(), "medbench-held-"));
      const body = "수술 memo line\\n".repeat(30000);
      fs.writeFileSync(join(dir, "memo"), sealed(body));
      const same = readSealed(join(dir, "memo"), () => {}) === body;
      fs.rmSync(dir, { recursive: true, force: true });
      const memoReads = wholeReads.filter((file) => file.endsWith("memo")); // not the modules Node loads
      console.log(JSON.stringify({ same, reads: reads.length, largest: Math.max(...reads), memoReads }));`);
    expect(out.same).toBe(true);
    expect(out.memoReads).toEqual([]);
    expect(out.largest).toBeLessThanOrEqual(1 << 16);
    expect(out.reads).toBeGreaterThan(8); // a 500 KB body
  });

  it("writes a records file as it goes, not a megabyte gathered first", () => {
    const file = join(mkdtempSync(join(tmpdir(), "medbench-held-")), "replies.jsonl");
    const onDisk: number[] = [];
    function* replies(): Generator<ReplyRecord> {
      for (let i = 0; i < 400; i++) {
        onDisk.push(statSync(file).size);
        yield syntheticReply(`r${i}`, "수술".repeat(500));
      }
    }
    writeRecordsFile("replies", replies(), file);
    // 100 lines of about 1,100 characters are made before the 101st: gathered up to 1 MB, none was written
    expect(onDisk[100]).toBeGreaterThan(0);
    expect(statSync(file).size).toBeGreaterThan(400 * 2000);
    rmSync(dirname(file), { recursive: true, force: true });
  });
});
