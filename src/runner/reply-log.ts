// One namespace of model replies: append-only logs (`<pid>-<tag>.log`, one per writing process, one line per
// reply: `key sha256 base64(payload)`, written with one write call the moment the reply arrives) and the
// index of those logs (reply-index.ts). Opening a namespace reads the index's small headers and only the log
// bytes no run covers yet (and indexes them); a lookup reads a few index entries and the one record. A record
// torn by a killed process fails its pattern or hash and is skipped, so an entry is whole or absent; logs are
// never rewritten, except by `cache gc` (compact), which writes the new one whole before removing any.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
  randomBytes,
} from "../util/builtins.js";
import { hostname } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../hash/sha256.js";
import { processAlive } from "./fsutil.js";
import {
  latestSorted,
  lineLength,
  mergeRuns,
  Run,
  RUN_NAME,
  writeRun,
  type Coverage,
  type IndexEntry,
} from "./reply-index.js";

const RECORD = /^([0-9a-f]{64}) ([0-9a-f]{64}) ([A-Za-z0-9+/=]*)$/;

/** One record of a log: `key sha256 base64(payload)` and a newline. */
export const recordLine = (key: string, payload: Buffer) =>
  `${key} ${sha256Hex(payload)} ${payload.toString("base64")}\n`;

interface Parsed {
  key: string;
  offset: number;
  payload: Buffer;
}

/** The whole records in `buf` (read from `base` of a log), and where the last complete line ends. */
function parseRecords(buf: Buffer, base: number): { records: Parsed[]; end: number } {
  const records: Parsed[] = [];
  let start = 0;
  for (let nl = buf.indexOf(10, start); nl >= 0; start = nl + 1, nl = buf.indexOf(10, start)) {
    const m = RECORD.exec(buf.toString("latin1", start, nl));
    if (!m) continue; // a torn or damaged record
    const payload = Buffer.from(m[3]!, "base64");
    if (sha256Hex(payload) === m[2]) records.push({ key: m[1]!, offset: base + start, payload });
  }
  return { records, end: base + start };
}

const writerAlive = (log: string) => {
  const pid = Number(/^(\d+)-/.exec(log)?.[1] ?? 0);
  return pid > 0 && processAlive(pid);
};

interface LogFile {
  name: string;
  size: number;
  mtimeMs: number;
  /** Its writer may still append (a log is named by its writer's pid). */
  live: boolean;
}

function logFiles(dir: string, names: string[]): LogFile[] {
  const out: LogFile[] = [];
  for (const name of names) {
    if (!name.endsWith(".log")) continue;
    try {
      const st = statSync(join(dir, name));
      out.push({ name, size: st.size, mtimeMs: st.mtimeMs, live: writerAlive(name) });
    } catch {
      /* removed meanwhile */
    }
  }
  // Older logs first, so that a later reply for the same key (--refresh) wins.
  return out.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : 1));
}

/** Temp files of writers killed while writing a run or a compacted log (never renamed into place). */
function sweepTemps(dir: string): void {
  for (const n of readdirSync(dir))
    if (/^\.tmp-\d+-/.test(n) && !writerAlive(n.slice(5))) rmSync(join(dir, n), { force: true });
}

/** The index lock of a namespace: held while runs are written or logs compacted. */
function tryLock(path: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, `${process.pid} ${hostname()}\n`);
      closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") return false;
      try {
        const m = /^(\d+) (\S+)\n$/.exec(readFileSync(path, "utf8"));
        const stale = m
          ? m[2] === hostname() && !processAlive(Number(m[1]))
          : Date.now() - statSync(path).mtimeMs > 60_000;
        if (!stale) return false;
        rmSync(path, { force: true });
      } catch {
        /* released meanwhile: try again */
      }
    }
  }
  return false;
}

export interface Compaction {
  /** The keys whose records go (in logs that are neither live nor recent). */
  removed: string[];
  /** Their payload bytes. */
  bytes: number;
  kept: number;
}

/** Coverage of the same log by several runs: one range (runs cover a log's bytes in order). */
function unionCoverage(lists: Coverage[][]): Coverage[] {
  const by = new Map<string, Coverage>();
  for (const list of lists)
    for (const c of list) {
      const was = by.get(c.name);
      by.set(
        c.name,
        was
          ? {
              name: c.name,
              from: Math.min(was.from, c.from),
              to: Math.max(was.to, c.to),
              sealed: was.sealed || c.sealed,
            }
          : { ...c },
      );
    }
  return [...by.values()];
}

export class ReplyLog {
  private runs: Run[] = []; // oldest first
  private tail = new Map<string, Buffer>(); // records of other processes that no run covers
  // This process's own records, newest of all: where each lies in its log (read back when asked for; its
  // payload is not held), and so the run this process writes of its log when it ends.
  private readonly mine = new Map<string, { offset: number; payloadLength: number }>();
  private readers = new Map<string, number>();
  private fd: number | null = null;
  private ownName: string | null = null;
  private ownSize = 0;

  /** `indexing` false: never writes (a dry run, a status), reading what no run covers each time. */
  constructor(
    private readonly dir: string,
    private readonly indexing = true,
  ) {
    this.load();
  }

  private get lockPath(): string {
    return join(this.dir, "index.lck");
  }

  private closeAll(): void {
    for (const r of this.runs) r.close();
    for (const fd of this.readers.values()) closeSync(fd);
    this.runs = [];
    this.readers = new Map();
    this.tail = new Map();
  }

  /** Reads the runs' headers and what no run covers yet; indexes the latter when no one else is. */
  private load(): void {
    this.closeAll();
    if (!existsSync(this.dir)) return;
    const names = readdirSync(this.dir);
    this.runs = names
      .filter((n) => RUN_NAME.test(n))
      .flatMap((n) => Run.open(this.dir, n) ?? [])
      .sort((a, b) => a.seq - b.seq || (a.name < b.name ? -1 : 1));
    const covered = new Map(unionCoverage(this.runs.map((r) => r.logs)).map((c) => [c.name, c]));
    const fresh: { log: LogFile; from: number; to: number; records: Parsed[] }[] = [];
    const unsealed = names.filter((n) => n !== this.ownName && !covered.get(n)?.sealed);
    for (const log of logFiles(this.dir, unsealed)) {
      const from = covered.get(log.name)?.to ?? 0;
      if (log.size <= from) {
        if (!log.live) fresh.push({ log, from, to: from, records: [] }); // to be marked sealed
        continue;
      }
      const buf = Buffer.alloc(log.size - from);
      const fd = openSync(join(this.dir, log.name), "r");
      try {
        readSync(fd, buf, 0, buf.length, from);
      } finally {
        closeSync(fd);
      }
      const { records, end } = parseRecords(buf, from);
      // A live writer may be in the middle of its last line: cover only whole lines of it.
      fresh.push({ log, from, to: log.live ? end : log.size, records });
    }
    for (const f of fresh) for (const r of f.records) this.tail.set(r.key, r.payload);
    if (fresh.length > 0 && this.indexing) this.index(fresh);
  }

  /** Writes a run of what `fresh` holds and merges runs; skipped when another process holds the index. */
  private index(fresh: { log: LogFile; from: number; to: number; records: Parsed[] }[]): void {
    const entries: IndexEntry[] = fresh.flatMap((f) =>
      f.records.map((r) => ({
        key: r.key,
        log: f.log.name,
        offset: r.offset,
        payloadLength: r.payload.length,
      })),
    );
    const coverage = fresh.map((f) => ({ name: f.log.name, from: f.from, to: f.to, sealed: !f.log.live }));
    this.addRun(entries, coverage);
  }

  /** Writes a run of `entries` covering `coverage` and merges runs; skipped when the index is held. */
  private addRun(entries: IndexEntry[], coverage: Coverage[]): void {
    mkdirSync(this.dir, { recursive: true });
    if (!tryLock(this.lockPath)) return;
    try {
      sweepTemps(this.dir);
      const seq = () =>
        1 + Math.max(0, ...readdirSync(this.dir).map((n) => Number(RUN_NAME.exec(n)?.[1] ?? 0)));
      const added = Run.open(this.dir, writeRun(this.dir, seq(), latestSorted(entries), coverage));
      if (added) this.runs.push(added);
      // Each run at least twice the size of the next newer one: few runs, each entry rewritten rarely.
      for (let n = this.runs.length; n >= 2; n = this.runs.length) {
        const [older, newer] = [this.runs[n - 2]!, this.runs[n - 1]!];
        if (newer.count * 2 < older.count && n <= 16) break;
        const merged = writeRun(
          this.dir,
          newer.seq,
          mergeRuns(older, newer),
          unionCoverage([older.logs, newer.logs]),
        );
        const run = Run.open(this.dir, merged);
        if (!run) break;
        for (const r of [older, newer]) {
          r.close();
          rmSync(join(this.dir, r.name), { force: true });
        }
        this.runs.splice(n - 2, 2, run);
      }
    } catch {
      /* an index that could not be written costs a longer start next time, nothing else */
    } finally {
      rmSync(this.lockPath, { force: true });
    }
  }

  /** The record a pointer names, checked; undefined when its log is gone (removed by a gc since). */
  private readAt(log: string, offset: number, payloadLength: number, key: string): Buffer | null | undefined {
    let fd = this.readers.get(log);
    if (fd === undefined) {
      try {
        fd = openSync(join(this.dir, log), "r");
      } catch {
        return undefined;
      }
      if (this.readers.size >= 64) {
        for (const f of this.readers.values()) closeSync(f);
        this.readers.clear();
      }
      this.readers.set(log, fd);
    }
    const buf = Buffer.alloc(lineLength(payloadLength));
    const n = readSync(fd, buf, 0, buf.length, offset);
    const m = RECORD.exec(buf.toString("latin1", 0, n));
    if (!m || m[1] !== key) return null;
    const payload = Buffer.from(m[3]!, "base64");
    return sha256Hex(payload) === m[2] ? payload : null;
  }

  get(key: string): Buffer | null {
    const own = this.mine.get(key);
    if (own) {
      const data = this.readAt(this.ownName!, own.offset, own.payloadLength, key);
      if (data) return data;
    }
    const here = this.tail.get(key);
    if (here) return here;
    if (this.runs.length === 0 || !/^[0-9a-f]{64}$/.test(key)) return null; // (a first run has no index)
    const k = Buffer.from(key, "hex");
    for (let attempt = 0; attempt < 2; attempt++) {
      let gone = false;
      for (let i = this.runs.length - 1; i >= 0; i--) {
        const p = this.runs[i]!.find(k);
        if (!p) continue;
        const data = this.readAt(p.log, p.offset, p.payloadLength, key);
        if (data) return data;
        if (data === undefined) gone = true;
      }
      if (!gone) return null;
      this.load(); // a gc rewrote the logs since this namespace was opened
    }
    return null;
  }

  put(key: string, data: string | Uint8Array): void {
    const payload = Buffer.from(data); // not held: read back from the log when asked for again
    if (this.fd === null) {
      mkdirSync(this.dir, { recursive: true });
      this.ownName = `${process.pid}-${randomBytes(6).toString("hex")}.log`;
      this.fd = openSync(join(this.dir, this.ownName), "a");
      process.once("exit", () => this.finish());
    }
    // One write call per record: a kill can cut it short, never interleave it with another.
    const line = recordLine(key, payload);
    writeSync(this.fd, line);
    this.mine.set(key, { offset: this.ownSize, payloadLength: payload.length });
    this.ownSize += line.length; // the line is ASCII
  }

  /**
   * The log closed, and indexed as written: a run of this process's records, covering its log whole and
   * sealed (nothing is written to it after), so the next build reads none of it. A process killed before
   * leaves no run: the next build indexes its log from the bytes, as any log no run covers.
   */
  private finish(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    if (!this.indexing || this.mine.size === 0) return;
    const log = this.ownName!;
    const entries: IndexEntry[] = [];
    for (const [key, p] of this.mine) entries.push({ key, log, ...p });
    this.addRun(entries, [{ name: log, from: 0, to: this.ownSize, sealed: true }]);
  }

  /** Every key held, with its payload's size (reads every run; for the maintenance commands). */
  sizes(): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of this.runs) for (const e of r.entries()) out.set(e.key, e.payloadLength);
    for (const [k, v] of this.tail) out.set(k, v.length);
    for (const [k, v] of this.mine) out.set(k, v.payloadLength);
    return out;
  }

  /** How many keys it holds. */
  size(): number {
    return this.sizes().size;
  }

  /**
   * Rewrites the logs whose writers are gone and that are older than `before` (ms since the epoch) into one
   * log holding only the records `keep` accepts, and the index into one run; live and recent logs are left
   * as they are. The new log and run are written whole (temp file, rename) before anything is removed, so a
   * kill at any point leaves every kept reply findable (at worst twice). `dryRun`: only says what would go.
   */
  compact(keep: (key: string) => boolean, before: number, dryRun: boolean): Compaction {
    const out: Compaction = { removed: [], bytes: 0, kept: 0 };
    if (!existsSync(this.dir)) return out;
    let locked = false;
    for (let i = 0; i < 600 && !(locked = tryLock(this.lockPath)); i++)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    if (!locked) throw new Error(`the reply index of ${this.dir} is held by another process (index.lck)`);
    try {
      const names = readdirSync(this.dir);
      const logs = logFiles(this.dir, names);
      const old = logs.filter((l) => !l.live && l.mtimeMs < before);
      const read = (l: LogFile) => parseRecords(readFileSync(join(this.dir, l.name)), 0);
      const oldEntries = new Map<string, Buffer>();
      for (const l of old) for (const r of read(l).records) oldEntries.set(r.key, r.payload);
      // A key also in a live or recent log stays there: its old copy goes without counting as removed.
      const rest = logs.filter((l) => !old.includes(l));
      const elsewhere = new Set(rest.flatMap((l) => read(l).records.map((r) => r.key)));
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
      const survivors = [...rest];
      if (lines.length > 0) {
        const name = `${process.pid}-${randomBytes(6).toString("hex")}.log`;
        const tmp = join(this.dir, `.tmp-${process.pid}-compact-${name}`);
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
        renameSync(tmp, join(this.dir, name));
        // Written by this (live) process, but complete: indexed as sealed.
        survivors.push({ name, size: statSync(join(this.dir, name)).size, mtimeMs: +t, live: false });
        survivors.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : 1));
      }
      const entries: IndexEntry[] = [];
      const coverage: Coverage[] = [];
      for (const l of survivors) {
        const { records, end } = read(l);
        for (const r of records)
          entries.push({ key: r.key, log: l.name, offset: r.offset, payloadLength: r.payload.length });
        coverage.push({ name: l.name, from: 0, to: l.live ? end : l.size, sealed: !l.live });
      }
      const seq = 1 + Math.max(0, ...names.map((n) => Number(RUN_NAME.exec(n)?.[1] ?? 0)));
      writeRun(this.dir, seq, latestSorted(entries), coverage);
      for (const n of names.filter((n) => RUN_NAME.test(n))) rmSync(join(this.dir, n), { force: true });
      for (const l of old) rmSync(join(this.dir, l.name), { force: true });
      sweepTemps(this.dir);
      return out;
    } finally {
      rmSync(this.lockPath, { force: true });
      if (!dryRun) this.load();
    }
  }
}
