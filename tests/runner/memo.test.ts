// The per-request reply log: an entry is whole or absent after a killed process; later replies win.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cache } from "../../src/runner/store/cache.js";
import { memoStore } from "../../src/runner/replies/memo.js";
import { execa } from "execa";
import { pathToFileURL } from "node:url";
import { REPO } from "../support/helpers.js";

const key = (i: number) => String(i).padStart(64, "0");

describe("memo log", () => {
  it("skips a record torn by a kill and a damaged one, keeps the others", () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    const a = memoStore(new Cache(dir));
    a.put("requests", key(1), '{"reply": 1}');
    a.put("requests", key(2), '{"reply": 2}');
    a.put("requests", key(3), '{"reply": 3}');
    const log = join(dir, "memo/requests", readdirSync(join(dir, "memo/requests"))[0]!);
    const lines = readFileSync(log, "utf8").split("\n");
    // Damage record 2's payload, and cut record 3 short, as a kill in the middle of a write would.
    lines[1] = lines[1]!.slice(0, -4) + (lines[1]!.endsWith("AAAA") ? "BBBB" : "AAAA");
    writeFileSync(log, lines.join("\n"));
    truncateSync(log, readFileSync(log).length - 12);
    const b = memoStore(new Cache(dir));
    expect(b.get("requests", key(1))?.toString()).toBe('{"reply": 1}');
    expect(b.get("requests", key(2))).toBeNull();
    expect(b.get("requests", key(3))).toBeNull();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps namespaces apart, and a later reply for a key wins", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    memoStore(new Cache(dir)).put("requests", key(1), "old");
    await new Promise((r) => setTimeout(r, 20)); // a later log file
    const second = memoStore(new Cache(dir));
    second.put("requests", key(1), "new");
    second.put("live", key(1), "live");
    const third = memoStore(new Cache(dir));
    expect(third.get("requests", key(1))?.toString()).toBe("new");
    expect(third.get("live", key(1))?.toString()).toBe("live");
    rmSync(dir, { recursive: true, force: true });
  });
});

/** Appends replies from another process (gone when this returns), as an earlier build would. */
async function writeElsewhere(dir: string, from: number, to: number, value = "v", killed = false) {
  const memo = pathToFileURL(join(REPO, "dist/src/runner/replies/memo.js")).href;
  const cache = pathToFileURL(join(REPO, "dist/src/runner/store/cache.js")).href;
  await execa("node", [
    "--input-type=module",
    "-e",
    `const { memoStore } = await import(${JSON.stringify(memo)});
     const { Cache } = await import(${JSON.stringify(cache)});
     const s = memoStore(new Cache(${JSON.stringify(dir)}));
     for (let i = ${from}; i < ${to}; i++) s.put("requests", String(i).padStart(64, "0"), "${value}" + i);
     ${killed ? 'process.kill(process.pid, "SIGKILL");' : ""}`,
  ]).catch((e: { signal?: string }) => {
    if (!killed || e.signal !== "SIGKILL") throw e;
  });
}

describe("reply index", () => {
  const runs = (dir: string) => readdirSync(join(dir, "memo/requests")).filter((f) => f.endsWith(".idx"));

  it("a writer indexes its own log as it ends: the next reader reads no log to find replies", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    await writeElsewhere(dir, 0, 300);
    expect(runs(dir).length).toBe(1);
    const folder = join(dir, "memo/requests");
    const [log] = readdirSync(folder).filter((f) => f.endsWith(".log"));
    const { Run } = await import("../../src/runner/replies/reply-index.js");
    const run = Run.open(folder, runs(dir)[0]!)!;
    // The whole log, sealed: a reader skips it.
    expect(run.logs).toEqual([
      { name: log, from: 0, to: readFileSync(join(folder, log!)).length, sealed: true },
    ]);
    expect(run.count).toBe(300);
    run.close();
    const reader = memoStore(new Cache(dir));
    for (const i of [0, 7, 150, 299]) expect(reader.get("requests", key(i))?.toString()).toBe(`v${i}`);
    expect(runs(dir).length).toBe(1); // nothing left to index
    rmSync(dir, { recursive: true, force: true });
  });

  it("a writer reads its own replies back from its log", () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    const s = memoStore(new Cache(dir));
    s.put("requests", key(1), "one");
    s.put("requests", key(2), "two");
    s.put("requests", key(1), "one again"); // --refresh: the later wins
    expect(s.get("requests", key(1))?.toString()).toBe("one again");
    expect(s.get("requests", key(2))?.toString()).toBe("two");
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds a reply written after a lookup read its log (a lookup reads on from the last read)", () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    const s = memoStore(new Cache(dir));
    for (let i = 0; i < 4; i++) {
      s.put("requests", key(i), `reply ${i}`);
      for (let j = 0; j <= i; j++) expect(s.get("requests", key(j))?.toString()).toBe(`reply ${j}`);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("indexes the logs of killed writers once and finds every reply through it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    await writeElsewhere(dir, 0, 300, "v", true);
    expect(runs(dir)).toEqual([]); // killed before it could index its log
    const first = memoStore(new Cache(dir)); // reads the new log whole, and indexes it
    expect(first.get("requests", key(7))?.toString()).toBe("v7");
    expect(runs(dir).length).toBe(1);
    const second = memoStore(new Cache(dir)); // through the index
    for (const i of [0, 7, 150, 299]) expect(second.get("requests", key(i))?.toString()).toBe(`v${i}`);
    expect(second.get("requests", key(300))).toBeNull();
    expect(second.get("requests", "f".repeat(64))).toBeNull();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets a later reply win over an indexed one, and merges runs so that few remain", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    for (let round = 0; round < 12; round++) {
      await writeElsewhere(dir, round * 10, round * 10 + 10, `r${round}-`);
      memoStore(new Cache(dir)).get("requests", key(0)); // each start indexes what is new
    }
    expect(runs(dir).length).toBeLessThanOrEqual(Math.ceil(Math.log2(12)) + 1);
    await writeElsewhere(dir, 5, 6, "refreshed-"); // --refresh of one request
    const s = memoStore(new Cache(dir));
    expect(s.get("requests", key(5))?.toString()).toBe("refreshed-5");
    const t = memoStore(new Cache(dir)); // now from the index
    expect(t.get("requests", key(5))?.toString()).toBe("refreshed-5");
    for (const i of [0, 59, 119])
      expect(t.get("requests", key(i))?.toString()).toBe(`r${Math.floor(i / 10)}-${i}`);
    rmSync(dir, { recursive: true, force: true });
  });

  it("ignores a damaged run: what it covered is read from the logs again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    await writeElsewhere(dir, 0, 50);
    memoStore(new Cache(dir)).get("requests", key(0));
    const [run] = runs(dir);
    const file = join(dir, "memo/requests", run!);
    truncateSync(file, readFileSync(file).length - 10);
    const s = memoStore(new Cache(dir));
    for (const i of [0, 25, 49]) expect(s.get("requests", key(i))?.toString()).toBe(`v${i}`);
    rmSync(dir, { recursive: true, force: true });
  });

  it("skips a torn last line of a killed writer, whole or absent, before and after indexing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    await writeElsewhere(dir, 0, 3);
    const log = join(dir, "memo/requests", readdirSync(join(dir, "memo/requests"))[0]!);
    truncateSync(log, readFileSync(log).length - 7); // the last record cut short, as kill -9 would
    for (let pass = 0; pass < 2; pass++) {
      const s = memoStore(new Cache(dir));
      expect(s.get("requests", key(1))?.toString()).toBe("v1");
      expect(s.get("requests", key(2))).toBeNull();
    }
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("reply log compaction (cache gc)", () => {
  it("keeps accepted replies of finished writers' old logs, leaves live ones, stays indexed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "medbench-memo-"));
    const folder = join(dir, "memo/requests");
    await writeElsewhere(dir, 0, 40);
    const live = memoStore(new Cache(dir)); // this process: a writer that still runs
    live.put("requests", key(100), "live");
    const { ReplyLog } = await import("../../src/runner/replies/reply-log.js");
    const log = new ReplyLog(folder);
    const keep = (k: string) => Number(k) % 2 === 0;
    const dry = log.compact(keep, Date.now() + 1000, true);
    expect(dry.removed.length).toBe(20);
    expect(new ReplyLog(folder).size()).toBe(41); // a dry run removes nothing
    const done = log.compact(keep, Date.now() + 1000, false);
    expect(done.removed.sort()).toEqual(dry.removed.sort());
    const after = memoStore(new Cache(dir));
    expect(after.get("requests", key(2))?.toString()).toBe("v2");
    expect(after.get("requests", key(3))).toBeNull();
    expect(after.get("requests", key(100))?.toString()).toBe("live");
    expect(readdirSync(folder).filter((f) => f.endsWith(".idx")).length).toBe(1);
    rmSync(dir, { recursive: true, force: true });
  });
});
