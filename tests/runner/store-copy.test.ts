// One Store interface for the local cache and the shared remote: `copy` takes any two stores, so it is
// checked here between two local caches (the S3 side is tests/runner/cache.test.ts). What it copies lands
// whole and checked: a damaged object is refused, a manifest whose output is in neither store is left out.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { Cache } from "../../src/runner/store/cache.js";
import { replyLog } from "../../src/runner/replies/memo.js";
import { localInventory, localStore } from "../../src/runner/upkeep/inventory.js";
import { copy } from "../../src/runner/upkeep/sync.js";
import type { StageManifest } from "../../src/runner/store/outcome.js";
import type { KeyRecord } from "../../src/runner/keys/keys.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function emptyCache(): Cache {
  const dir = mkdtempSync(join(tmpdir(), "medbench-copy-"));
  dirs.push(dir);
  return new Cache(dir);
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/** A stage manifest naming `outputs`, under a key of its own. */
function manifest(name: string, outputs: Record<string, string>, incomplete?: string): StageManifest {
  const record = { kind: "parse" } as unknown as KeyRecord;
  return {
    key: sha(name),
    kind: "parse",
    outputs,
    record,
    paths: {},
    ...(incomplete ? { incomplete } : {}),
  };
}

describe("copy between two stores", () => {
  it("copies objects, whole manifests and replies; a second copy finds nothing left", async () => {
    const from = emptyCache();
    const to = emptyCache();
    const first = from.put("first output\n");
    const second = from.put("second output\n");
    from.writeManifest(manifest("whole", { out: first }));
    from.writeManifest(manifest("unfinished", { out: second }, "2 requests failed"));
    from.writeManifest(manifest("orphan", { out: sha("never stored") }));
    replyLog(from, "requests").put(sha("request"), '{"reply": 1}');

    const copied = await copy(localStore(from), localStore(to), localInventory(from), localInventory(to));
    expect(copied).toEqual({ objects: 2, stages: 1, replies: 1, refused: 0, skipped: 2 });
    expect(to.read(first).toString()).toBe("first output\n");
    expect(to.readManifest(sha("whole"))?.outputs).toEqual({ out: first });
    expect(to.readManifest(sha("unfinished"))).toBeNull();
    expect(to.readManifest(sha("orphan"))).toBeNull();
    expect(replyLog(to, "requests").get(sha("request"))?.toString()).toBe('{"reply": 1}');

    const again = await copy(localStore(from), localStore(to), localInventory(from), localInventory(to));
    expect(again).toEqual({ objects: 0, stages: 0, replies: 0, refused: 0, skipped: 2 });
  });

  it("refuses a damaged object, and leaves out the manifest that names it", async () => {
    const from = emptyCache();
    const to = emptyCache();
    const hash = from.put("an output\n");
    from.writeManifest(manifest("reads it", { out: hash }));
    const path = from.objectPath(hash);
    const bytes = readFileSync(path);
    bytes[0] = bytes[0]! ^ 1;
    writeFileSync(path, bytes);

    const copied = await copy(localStore(from), localStore(to), localInventory(from), localInventory(to));
    expect(copied).toMatchObject({ objects: 0, stages: 0, refused: 1, skipped: 1 });
    expect(localInventory(to).objects.size).toBe(0);
    expect(to.readManifest(sha("reads it"))).toBeNull();
  });
});
