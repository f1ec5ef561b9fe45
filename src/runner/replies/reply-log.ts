// One namespace of model replies: append-only logs (`<pid>-<tag>.log`, one per writing process, one line per
// reply: `key sha256 base64(payload)`, written with one write call the moment the reply arrives) and the
// index of those logs (reply-index.ts). Opening a namespace reads the index's small headers and only the log
// bytes no run covers yet (and indexes them); a lookup reads a few index entries and the one record. A
// record torn by a killed process fails its pattern or hash and is skipped, so an entry is whole or absent;
// logs are never rewritten, except by `cache gc` (compact), which writes the new one whole before removing
// any.
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
} from "../../util/builtins.js";
import { hostname } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../hash/sha256.js";
import { processAlive } from "../../util/fsutil.js";
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
    const match = RECORD.exec(buf.toString("latin1", start, nl));
    if (!match) continue; // a torn or damaged record
    const payload = Buffer.from(match[3]!, "base64");
    if (sha256Hex(payload) === match[2]) records.push({ key: match[1]!, offset: base + start, payload });
  }
  return { records, end: base + start };
}

/** Bytes of a log as read (a log only grows: bytes read stay true). A rebuild looks its replies up in about
 *  the order they were written (give or take the route's concurrency), so one read serves many lookups:
 *  2,070 lookups made 2,070 reads. */
interface Window {
  log: string;
  start: number;
  bytes: Buffer;
}
const WINDOW = 256 * 1024;
const WINDOW_BEHIND = 64 * 1024;

/** The `length` bytes at `offset` of `log`, when the window holds them all. */
function inWindow(window: Window | null, log: string, offset: number, length: number): Buffer | null {
  if (!window || window.log !== log || offset < window.start) return null;
  const at = offset - window.start;
  return at + length <= window.bytes.length ? window.bytes.subarray(at, at + length) : null;
}

/** The payload of a record line read whole at its index entry's place (`key sha256 base64`, no newline),
 *  when it is `key`'s and its bytes hash to its sha256: read by position, not by RECORD, since a damaged
 *  byte anywhere fails the key, the layout or the hash. */
function checkedPayload(line: Buffer, key: string): Buffer | null {
  if (line[64] !== 0x20 || line[129] !== 0x20 || line.toString("latin1", 0, 64) !== key) return null;
  const payload = Buffer.from(line.toString("latin1", 130), "base64");
  return sha256Hex(payload) === line.toString("latin1", 65, 129) ? payload : null;
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
  return out.sort((left, right) => left.mtimeMs - right.mtimeMs || (left.name < right.name ? -1 : 1));
}

/** Temp files of writers killed while writing a run or a compacted log (never renamed into place). */
function sweepTemps(dir: string): void {
  for (const name of readdirSync(dir))
    if (/^\.tmp-\d+-/.test(name) && !writerAlive(name.slice(5))) rmSync(join(dir, name), { force: true });
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
        const match = /^(\d+) (\S+)\n$/.exec(readFileSync(path, "utf8"));
        const stale = match
          ? match[2] === hostname() && !processAlive(Number(match[1]))
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

/** Waits up to 30 s for the index lock of `dir` (compaction must not race an indexing build). */
function waitForLock(lockPath: string, dir: string): void {
  let locked = false;
  for (let i = 0; i < 600 && !(locked = tryLock(lockPath)); i++)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  if (!locked) throw new Error(`the reply index of ${dir} is held by another process (index.lck)`);
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
    for (const coverage of list) {
      const was = by.get(coverage.name);
      by.set(
        coverage.name,
        was
          ? {
              name: coverage.name,
              from: Math.min(was.from, coverage.from),
              to: Math.max(was.to, coverage.to),
              sealed: was.sealed || coverage.sealed,
            }
          : { ...coverage },
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
  private window: Window | null = null; // the log bytes read last (lookups read on from there)
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
    for (const run of this.runs) run.close();
    for (const fd of this.readers.values()) closeSync(fd);
    this.runs = [];
    this.readers = new Map();
    this.tail = new Map();
    this.window = null;
  }

  /** Reads the runs' headers and what no run covers yet; indexes the latter when no one else is. */
  private load(): void {
    this.closeAll();
    if (!existsSync(this.dir)) return;
    const names = readdirSync(this.dir);
    this.runs = names
      .filter((name) => RUN_NAME.test(name))
      .flatMap((name) => Run.open(this.dir, name) ?? [])
      .sort((left, right) => left.seq - right.seq || (left.name < right.name ? -1 : 1));
    const covered = new Map(
      unionCoverage(this.runs.map((run) => run.logs)).map((coverage) => [coverage.name, coverage]),
    );
    const fresh: { log: LogFile; from: number; to: number; records: Parsed[] }[] = [];
    const unsealed = names.filter((name) => name !== this.ownName && !covered.get(name)?.sealed);
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
    for (const part of fresh) for (const record of part.records) this.tail.set(record.key, record.payload);
    if (fresh.length > 0 && this.indexing) this.index(fresh);
  }

  /** Writes a run of what `fresh` holds and merges runs; skipped when another process holds the index. */
  private index(fresh: { log: LogFile; from: number; to: number; records: Parsed[] }[]): void {
    const entries: IndexEntry[] = fresh.flatMap((part) =>
      part.records.map((record) => ({
        key: record.key,
        log: part.log.name,
        offset: record.offset,
        payloadLength: record.payload.length,
      })),
    );
    const coverage = fresh.map((part) => ({
      name: part.log.name,
      from: part.from,
      to: part.to,
      sealed: !part.log.live,
    }));
    this.addRun(entries, coverage);
  }

  /** Writes a run of `entries` covering `coverage` and merges runs; skipped when the index is held. */
  private addRun(entries: IndexEntry[], coverage: Coverage[]): void {
    mkdirSync(this.dir, { recursive: true });
    if (!tryLock(this.lockPath)) return;
    try {
      sweepTemps(this.dir);
      const seq = () =>
        1 + Math.max(0, ...readdirSync(this.dir).map((name) => Number(RUN_NAME.exec(name)?.[1] ?? 0)));
      const added = Run.open(this.dir, writeRun(this.dir, seq(), latestSorted(entries), coverage));
      if (added) this.runs.push(added);
      // Each run at least twice the size of the next newer one: few runs, each entry rewritten rarely.
      for (let runCount = this.runs.length; runCount >= 2; runCount = this.runs.length) {
        const [older, newer] = [this.runs[runCount - 2]!, this.runs[runCount - 1]!];
        if (newer.count * 2 < older.count && runCount <= 16) break;
        const merged = writeRun(
          this.dir,
          newer.seq,
          mergeRuns(older, newer),
          unionCoverage([older.logs, newer.logs]),
        );
        const run = Run.open(this.dir, merged);
        if (!run) break;
        for (const replaced of [older, newer]) {
          replaced.close();
          rmSync(join(this.dir, replaced.name), { force: true });
        }
        this.runs.splice(runCount - 2, 2, run);
      }
    } catch {
      /* an index that could not be written costs a longer start next time, nothing else */
    } finally {
      rmSync(this.lockPath, { force: true });
    }
  }

  /** The record a pointer names, checked; undefined when its log is gone (removed by a gc since). */
  private readAt(
    log: string,
    offset: number,
    payloadLength: number,
    key: string,
  ): Buffer | null | undefined {
    let fd = this.readers.get(log);
    if (fd === undefined) {
      try {
        fd = openSync(join(this.dir, log), "r");
      } catch {
        return undefined;
      }
      if (this.readers.size >= 64) {
        for (const reader of this.readers.values()) closeSync(reader);
        this.readers.clear();
      }
      this.readers.set(log, fd);
    }
    const length = lineLength(payloadLength);
    const line = inWindow(this.window, log, offset, length) ?? this.readWindow(fd, log, offset, length);
    return line ? checkedPayload(line, key) : null;
  }

  /** Reads the log's bytes around `offset` into the window; the line there, when the log holds it whole. */
  private readWindow(fd: number, log: string, offset: number, length: number): Buffer | null {
    const start = Math.max(0, offset - WINDOW_BEHIND);
    const bytes = Buffer.allocUnsafe(Math.max(WINDOW, offset - start + length));
    this.window = { log, start, bytes: bytes.subarray(0, readSync(fd, bytes, 0, bytes.length, start)) };
    return inWindow(this.window, log, offset, length);
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
    const keyBytes = Buffer.from(key, "hex");
    for (let attempt = 0; attempt < 2; attempt++) {
      let gone = false;
      for (let i = this.runs.length - 1; i >= 0; i--) {
        const pointer = this.runs[i]!.find(keyBytes);
        if (!pointer) continue;
        const data = this.readAt(pointer.log, pointer.offset, pointer.payloadLength, key);
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
    for (const [key, pointer] of this.mine) entries.push({ key, log, ...pointer });
    this.addRun(entries, [{ name: log, from: 0, to: this.ownSize, sealed: true }]);
  }

  /** Every key held, with its payload's size (reads every run; for the maintenance commands). */
  sizes(): Map<string, number> {
    const out = new Map<string, number>();
    for (const run of this.runs) for (const e of run.entries()) out.set(e.key, e.payloadLength);
    for (const [heldKey, payload] of this.tail) out.set(heldKey, payload.length);
    for (const [heldKey, pointer] of this.mine) out.set(heldKey, pointer.payloadLength);
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
    waitForLock(this.lockPath, this.dir);
    try {
      const names = readdirSync(this.dir);
      const logs = logFiles(this.dir, names);
      const old = logs.filter((log) => !log.live && log.mtimeMs < before);
      const rest = logs.filter((log) => !old.includes(log));
      const lines = this.sortOldRecords(old, rest, keep, out);
      if (dryRun || out.removed.length === 0) return out;
      const survivors = [...rest];
      if (lines.length > 0) {
        survivors.push(this.writeCompactedLog(lines, old));
        survivors.sort((left, right) => left.mtimeMs - right.mtimeMs || (left.name < right.name ? -1 : 1));
      }
      this.reindex(names, survivors);
      for (const log of old) rmSync(join(this.dir, log.name), { force: true });
      sweepTemps(this.dir);
      return out;
    } finally {
      rmSync(this.lockPath, { force: true });
      if (!dryRun) this.load();
    }
  }

  private readLog(log: LogFile): { records: Parsed[]; end: number } {
    return parseRecords(readFileSync(join(this.dir, log.name)), 0);
  }

  /** The record lines of `old` logs that `keep` accepts; counts the kept and removed ones in `out`. */
  private sortOldRecords(
    old: LogFile[],
    rest: LogFile[],
    keep: (key: string) => boolean,
    out: Compaction,
  ): string[] {
    const oldEntries = new Map<string, Buffer>();
    for (const log of old)
      for (const record of this.readLog(log).records) oldEntries.set(record.key, record.payload);
    // A key also in a live or recent log stays there: its old copy goes without counting as removed.
    const elsewhere = new Set(rest.flatMap((log) => this.readLog(log).records.map((record) => record.key)));
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
    return lines;
  }

  /** Writes `lines` whole as one new log, dated as the newest of the `old` logs it replaces. */
  private writeCompactedLog(lines: string[], old: LogFile[]): LogFile {
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
    const mtime = new Date(Math.max(...old.map((log) => log.mtimeMs)));
    utimesSync(tmp, mtime, mtime);
    renameSync(tmp, join(this.dir, name));
    // Written by this (live) process, but complete: indexed as sealed.
    return { name, size: statSync(join(this.dir, name)).size, mtimeMs: +mtime, live: false };
  }

  /** Replaces every run (listed in `names`) with one run indexing the `survivors`. */
  private reindex(names: string[], survivors: LogFile[]): void {
    const entries: IndexEntry[] = [];
    const coverage: Coverage[] = [];
    for (const log of survivors) {
      const { records, end } = this.readLog(log);
      for (const record of records)
        entries.push({
          key: record.key,
          log: log.name,
          offset: record.offset,
          payloadLength: record.payload.length,
        });
      coverage.push({ name: log.name, from: 0, to: log.live ? end : log.size, sealed: !log.live });
    }
    const seq = 1 + Math.max(0, ...names.map((name) => Number(RUN_NAME.exec(name)?.[1] ?? 0)));
    writeRun(this.dir, seq, latestSorted(entries), coverage);
    for (const runFile of names.filter((name) => RUN_NAME.test(name)))
      rmSync(join(this.dir, runFile), { force: true });
  }
}
