// The per-request reply log: an entry is whole or absent after a killed process; later replies win.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cache } from "../src/runner/cache.js";
import { memoStore } from "../src/runner/memo.js";

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
