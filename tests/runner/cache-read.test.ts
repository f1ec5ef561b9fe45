// Cache object reads: an object is hashed on its first read in a process and not again while its file is
// unchanged, yet damage is still caught: by the next process always, and within a process as soon
// as the file's size, mtime or inode moved. A damaged object between builds makes its stage run again.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cache, CorruptObjectError } from "../../src/runner/store/cache.js";
import { Project } from "../support/rig.js";

const dirs: string[] = [];
const projects: Project[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
  while (projects.length) projects.pop()!.remove();
});

function cache(root?: string): Cache {
  const dir = root ?? mkdtempSync(join(tmpdir(), "medbench-cache-"));
  if (!root) dirs.push(dir);
  return new Cache(dir);
}

/** Rewrites a byte of the file in place: same size and inode; the mtime moves unless `keepMtime`. */
function damage(path: string, keepMtime = false): void {
  const st = statSync(path);
  const bytes = readFileSync(path);
  bytes[0] = bytes[0]! ^ 1;
  writeFileSync(path, bytes);
  if (keepMtime) utimesSync(path, st.atime, st.mtime);
  else utimesSync(path, st.atime, new Date(st.mtimeMs + 5000));
}

describe("cache object reads", () => {
  it("reads back what was stored, again and again", () => {
    const c = cache();
    const h = c.put("some output\n");
    for (let i = 0; i < 3; i++) expect(c.read(h).toString()).toBe("some output\n");
  });

  it("catches an object damaged after this process verified it, once its file changed", () => {
    const c = cache();
    const h = c.put("verified output\n");
    expect(c.read(h).toString()).toBe("verified output\n");
    damage(c.objectPath(h));
    expect(() => c.read(h)).toThrow(CorruptObjectError);
    expect(existsSync(c.objectPath(h))).toBe(false); // removed: the stage that made it runs again
  });

  it("hashes on the first read in a new process, even when the damage kept size and mtime", () => {
    const first = cache();
    const h = first.put("an output of an earlier build\n");
    damage(first.objectPath(h), true);
    const next = cache(first.root); // a new process: nothing verified yet
    expect(() => next.read(h)).toThrow(/is corrupted/);
  });
});

describe("cache object copies (a results folder's files)", () => {
  const dest = () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-copy-"));
    dirs.push(dir);
    return join(dir, "out.jsonl");
  };

  it("copies an object of several chunks byte for byte, verified or not", () => {
    const c = cache();
    const bytes = Buffer.alloc(3 * 2 ** 20 + 12345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    const h = c.put(bytes);
    for (const to of [dest(), dest()]) {
      c.copyTo(h, to); // the first copy verifies it, the second skips the hash
      expect(readFileSync(to).equals(bytes)).toBe(true);
    }
  });

  it("catches an object damaged after this process verified it, and leaves no copy", () => {
    const c = cache();
    const h = c.put("verified output\n");
    c.copyTo(h, dest());
    damage(c.objectPath(h));
    const to = dest();
    expect(() => c.copyTo(h, to)).toThrow(CorruptObjectError);
    expect(existsSync(to)).toBe(false);
    expect(existsSync(c.objectPath(h))).toBe(false);
  });

  it("hashes on the first copy in a new process, even when the damage kept size and mtime", () => {
    const first = cache();
    const h = first.put("an output of an earlier build\n");
    damage(first.objectPath(h), true);
    const to = dest();
    expect(() => cache(first.root).copyTo(h, to)).toThrow(/is corrupted/);
    expect(existsSync(to)).toBe(false);
  });
});

describe("a damaged object between builds", () => {
  it("is recomputed by the stage that made it, and the results are the same", async () => {
    const p = new Project();
    projects.push(p);
    const first = await p.build();
    const metrics = readFileSync(join(first.summary.results, "metrics.json"), "utf8");
    const lock = JSON.parse(p.read("medbench.lock"));
    const builds = lock.specs["specs/voice-command.yaml"].builds;
    const requests = (
      Object.values(builds)[0] as { stages: Record<string, { outputs: { requests: string } }> }
    ).stages.prompts!.outputs.requests;
    damage(p.path("cache/objects", requests.slice(0, 2), requests));
    const second = await p.build();
    expect(second.status.prompts).toBe("ran");
    expect(readFileSync(join(second.summary.results, "metrics.json"), "utf8")).toBe(metrics);
    expect(p.read("medbench.lock")).toBe(JSON.stringify(lock, null, 2) + "\n");
  });
});
