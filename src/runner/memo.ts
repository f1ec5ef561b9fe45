// Memo entries (the model stage's per-request replies), kept as append-only logs: each process appends
// records `key sha256 base64(payload)` to its own file under memo/<namespace>/, one write per reply, the
// moment it arrives. A record torn by a killed process fails its length or hash and is skipped, so an entry
// is whole or absent; nothing is ever rewritten. Creating a file per reply costs far more on a journalled
// disk than appending a line (scripts/bench/model.mjs).
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Cache } from "./cache.js";
import type { MemoStore } from "./stage.js";
import { sha256Hex } from "../hash/sha256.js";

const RECORD = /^([0-9a-f]{64}) ([0-9a-f]{64}) ([A-Za-z0-9+/=]*)$/;

class Namespace {
  private readonly entries = new Map<string, Buffer>();
  private fd: number | null = null;

  constructor(private readonly dir: string) {
    if (!existsSync(dir)) return;
    // Older logs first, so that a later reply for the same key (--refresh) wins.
    const logs = readdirSync(dir)
      .filter((f) => f.endsWith(".log"))
      .map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs }))
      .sort((a, b) => a.t - b.t || (a.f < b.f ? -1 : 1));
    for (const { f } of logs) {
      for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
        const m = RECORD.exec(line);
        if (!m) continue; // a torn or damaged record
        const payload = Buffer.from(m[3]!, "base64");
        if (sha256Hex(payload) === m[2]) this.entries.set(m[1]!, payload);
      }
    }
  }

  get(key: string): Buffer | null {
    return this.entries.get(key) ?? null;
  }

  put(key: string, data: string | Uint8Array): void {
    const payload = Buffer.from(data);
    if (this.fd === null) {
      mkdirSync(this.dir, { recursive: true });
      this.fd = openSync(join(this.dir, `${process.pid}-${randomBytes(6).toString("hex")}.log`), "a");
      process.once("exit", () => {
        if (this.fd !== null) closeSync(this.fd);
      });
    }
    // One write call per record: a kill can cut it short, never interleave it with another.
    writeSync(this.fd, `${key} ${sha256Hex(payload)} ${payload.toString("base64")}\n`);
    this.entries.set(key, payload);
  }
}

export function memoStore(cache: Cache): MemoStore {
  const spaces = new Map<string, Namespace>();
  const folder = (ns: string) => ns.replace(/[^a-z0-9_-]/gi, "_");
  const space = (ns: string) => {
    let s = spaces.get(ns);
    if (!s) {
      s = new Namespace(join(cache.root, "memo", folder(ns)));
      spaces.set(ns, s);
    }
    return s;
  };
  const remote = cache.remote;
  return {
    get: (ns, key) => {
      const local = space(ns).get(key);
      if (local !== null || !remote) return local;
      // Read-through: a reply another machine received, checked against its hash, then kept here too.
      return remote.getKeyed(`replies/${folder(ns)}/${key}`).then((data) => {
        if (data !== null) space(ns).put(key, data);
        return data;
      });
    },
    put: (ns, key, data) => {
      space(ns).put(key, data); // here first: a reply is never lost to a remote that is down
      void remote?.putKeyed(`replies/${folder(ns)}/${key}`, Buffer.from(data));
    },
  };
}
