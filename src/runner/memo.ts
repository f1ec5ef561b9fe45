// Memo entries (the model stage's per-request replies), kept as append-only logs: each process appends
// records `key sha256 base64(payload)` to its own file under memo/<namespace>/, one write per reply, the
// moment it arrives. A record torn by a killed process fails its length or hash and is skipped, so an entry
// is whole or absent; nothing is ever rewritten. Creating a file per reply costs far more on a journalled
// disk than appending a line (scripts/bench/model.mjs).
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Cache } from "./cache.js";
import type { MemoStore } from "./stage.js";
import { sha256Hex } from "../hash/sha256.js";
import { processAlive } from "./fsutil.js";

const RECORD = /^([0-9a-f]{64}) ([0-9a-f]{64}) ([A-Za-z0-9+/=]*)$/;

interface LogFile {
  name: string;
  mtimeMs: number;
  /** Its writer may still append (a log is named by its writer's pid; a live one is never rewritten). */
  live: boolean;
}

/** The logs of a namespace folder, oldest first (a later reply for the same key, --refresh, wins). */
function logsOf(dir: string): LogFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .map((name) => {
      const pid = Number(/^(\d+)-/.exec(name)?.[1] ?? 0);
      return { name, mtimeMs: statSync(join(dir, name)).mtimeMs, live: pid > 0 && processAlive(pid) };
    })
    .sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : 1));
}

/** The whole records of a log, in order (a torn or damaged one is skipped). */
function* records(file: string): Generator<[string, Buffer]> {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = RECORD.exec(line);
    if (!m) continue;
    const payload = Buffer.from(m[3]!, "base64");
    if (sha256Hex(payload) === m[2]) yield [m[1]!, payload];
  }
}

const recordLine = (key: string, payload: Buffer) =>
  `${key} ${sha256Hex(payload)} ${payload.toString("base64")}\n`;

export interface Compaction {
  /** The keys whose records go (in logs that are neither live nor recent). */
  removed: string[];
  /** Their payload bytes. */
  bytes: number;
  kept: number;
}

/** One namespace of replies (a folder of logs). */
export class ReplyLog {
  private readonly entries = new Map<string, Buffer>();
  private fd: number | null = null;

  constructor(private readonly dir: string) {
    for (const { name } of logsOf(dir))
      for (const [key, payload] of records(join(dir, name))) this.entries.set(key, payload);
  }

  /** How many keys it holds. */
  size(): number {
    return this.entries.size;
  }

  /** Every key held, with its payload's size. */
  sizes(): Map<string, number> {
    return new Map([...this.entries].map(([k, v]) => [k, v.length]));
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
    writeSync(this.fd, recordLine(key, payload));
    this.entries.set(key, payload);
  }

  /**
   * Rewrites the logs whose writers are gone and that are older than `before` (ms since the epoch) into one
   * log holding only the records `keep` accepts; live and recent logs are left as they are. The new log is
   * written whole under a temporary name and renamed into place before the old ones are removed, so a kill
   * at any point leaves every kept reply (at worst twice). `dryRun`: only says what would go.
   */
  compact(keep: (key: string) => boolean, before: number, dryRun: boolean): Compaction {
    const logs = logsOf(this.dir);
    const old = logs.filter((l) => !l.live && l.mtimeMs < before);
    const oldEntries = new Map<string, Buffer>();
    for (const { name } of old) for (const [k, v] of records(join(this.dir, name))) oldEntries.set(k, v);
    // A key also in a live or recent log stays there: its old copy is dropped without counting as removed.
    const elsewhere = new Set<string>();
    for (const { name } of logs.filter((l) => !old.includes(l)))
      for (const [k] of records(join(this.dir, name))) elsewhere.add(k);
    const out: Compaction = { removed: [], bytes: 0, kept: 0 };
    const lines: string[] = [];
    for (const [key, payload] of oldEntries) {
      if (keep(key)) {
        out.kept++;
        lines.push(recordLine(key, payload));
      } else if (!elsewhere.has(key)) {
        out.removed.push(key);
        out.bytes += payload.length;
      }
    }
    if (dryRun || out.removed.length === 0) return out;
    const tag = `${process.pid}-${randomBytes(6).toString("hex")}`;
    const tmp = join(this.dir, `.compact-${tag}`);
    if (lines.length > 0) {
      const fd = openSync(tmp, "w");
      try {
        writeSync(fd, lines.join(""));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      // As old as what it replaces: replies in later logs still win over it.
      const t = new Date(Math.max(...old.map((l) => l.mtimeMs)));
      utimesSync(tmp, t, t);
      renameSync(tmp, join(this.dir, `${tag}.log`));
    }
    for (const { name } of old) rmSync(join(this.dir, name), { force: true });
    for (const key of out.removed) this.entries.delete(key);
    return out;
  }
}

/** The memo folder of a namespace (its name made safe for a file name; also the remote's folder). */
export const replyFolder = (ns: string) => ns.replace(/[^a-z0-9_-]/gi, "_");

/** The namespace folders of a cache's memo (e.g. requests, and verify --live's). */
export function replyFolders(cache: Cache): string[] {
  const dir = join(cache.root, "memo");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** The reply log of a namespace folder. */
export function replyLog(cache: Cache, folder: string): ReplyLog {
  return new ReplyLog(join(cache.root, "memo", folder));
}

export function memoStore(cache: Cache): MemoStore {
  const spaces = new Map<string, ReplyLog>();
  const folder = replyFolder;
  const space = (ns: string) => {
    let s = spaces.get(ns);
    if (!s) {
      s = replyLog(cache, folder(ns));
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
