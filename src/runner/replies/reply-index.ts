// The index of a reply namespace: immutable sorted runs (`run-<seq>-<tag>.idx`), each mapping request keys
// to where their record lies in the append-only logs, so that a model stage reads only the records it asks
// for instead of every log ever written. A run is written whole (temp file, rename) and never changed; a
// new run indexes what the logs gained since the last one, and runs are merged so that each is at least
// twice the size of the next newer one (at most log2(N) of them; each record is rewritten O(log N) times in
// all). Newer runs win, as later log records do (--refresh). A run names the byte ranges of the logs it
// covers, so whatever no run covers (a log written since, a run lost to a kill) is read from the logs and
// indexed next.
//
// Layout: `medbench-reply-index 1 <header bytes>\n`, the header JSON {logs: [{name, from, to, sealed}]},
// a fan-out table (256 big-endian uint32: entries whose key's first byte is <= b; the last is the count),
// then the of 48 bytes sorted by key: key (32), log number in the header (uint32), offset (uint64), payload
// length (uint32). The payload length gives the record's length (the line is `key sha base64\n`).
import {
  closeSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
  randomBytes,
} from "../../util/builtins.js";
import { join } from "node:path";

export const ENTRY = 48;
const MAGIC = "medbench-reply-index 1 ";
const FANOUT = 256 * 4;
/** A bucket this small is read at once and searched in memory. */
const BLOCK = 16 * 1024;
/** A run this small is read whole at its first lookup (one read instead of one a lookup: a rebuild of
 *  2,070 items looks every reply up, and the reads were a third of its lookups' time). 4 MB: 87,000 keys. */
const HELD = 4 * 1024 * 1024;

export interface Coverage {
  name: string;
  from: number;
  to: number;
  /** Its writer was gone when indexed: the log never grows again (no need to look at it). */
  sealed: boolean;
}

export interface Pointer {
  log: string;
  offset: number;
  payloadLength: number;
}

export interface IndexEntry extends Pointer {
  key: string;
}

/** The length of a record line (without its newline) holding a payload of this many bytes. */
export const lineLength = (payloadLength: number) => 130 + 4 * Math.ceil(payloadLength / 3);

export const RUN_NAME = /^run-(\d{12})-[0-9a-f]+\.idx$/;

/** A run file as `Run.open` finds it: its name and sequence number, open descriptor, entry count, the logs
 *  it covers, its fan-out table, and the offset its entries start at. */
interface RunFile {
  name: string;
  seq: number;
  fd: number;
  count: number;
  logs: Coverage[];
  fanout: Buffer;
  base: number;
}

export class Run {
  readonly name: string;
  readonly seq: number;
  readonly count: number;
  readonly logs: Coverage[];
  private readonly fd: number;
  private readonly fanout: Buffer;
  private readonly base: number;

  private constructor(file: RunFile) {
    this.name = file.name;
    this.seq = file.seq;
    this.count = file.count;
    this.logs = file.logs;
    this.fd = file.fd;
    this.fanout = file.fanout;
    this.base = file.base;
  }

  /** Opens a run, or null when it is not a whole one (it is then ignored, and what it covered reindexed). */
  static open(dir: string, name: string): Run | null {
    const seq = Number(RUN_NAME.exec(name)?.[1] ?? NaN);
    let fd: number;
    try {
      fd = openSync(join(dir, name), "r");
    } catch {
      return null;
    }
    try {
      const head = Buffer.alloc(64);
      const bytesRead = readSync(fd, head, 0, 64, 0);
      const text = head.subarray(0, bytesRead).toString("latin1");
      const nl = text.indexOf("\n");
      if (!text.startsWith(MAGIC) || nl < 0) throw new Error("not a run");
      const headerLength = Number(text.slice(MAGIC.length, nl));
      const header = Buffer.alloc(headerLength);
      if (readSync(fd, header, 0, headerLength, nl + 1) !== headerLength) throw new Error("short");
      const parsed = JSON.parse(header.toString("utf8")) as { logs: Coverage[] };
      const fanout = Buffer.alloc(FANOUT);
      const base = nl + 1 + headerLength + FANOUT;
      if (readSync(fd, fanout, 0, FANOUT, nl + 1 + headerLength) !== FANOUT) throw new Error("short");
      const count = fanout.readUInt32BE(FANOUT - 4);
      // The file ends with the last entry: a run is renamed into place only when whole.
      if (fstatSync(fd).size !== base + count * ENTRY) throw new Error("not whole");
      return new Run({ name, seq, fd, count, logs: parsed.logs, fanout, base });
    } catch {
      closeSync(fd);
      return null;
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  private held: Buffer | null = null;

  private read(from: number, count: number): Buffer {
    if (this.held) return this.held.subarray(from * ENTRY, (from + count) * ENTRY);
    const buf = Buffer.alloc(count * ENTRY);
    readSync(this.fd, buf, 0, buf.length, this.base + from * ENTRY);
    return buf;
  }

  private pointer(buf: Buffer, at: number): Pointer {
    const start = at * ENTRY;
    return {
      log: this.logs[buf.readUInt32BE(start + 32)]?.name ?? "",
      offset: buf.readUInt32BE(start + 36) * 2 ** 32 + buf.readUInt32BE(start + 40),
      payloadLength: buf.readUInt32BE(start + 44),
    };
  }

  /** Where this run says the record of `key` (32 bytes) is, or null. A few small reads, whatever the
   *  size. */
  find(key: Buffer): Pointer | null {
    if (!this.held && this.count * ENTRY <= HELD) this.held = this.read(0, this.count);
    const firstByte = key[0]!;
    let lo = firstByte === 0 ? 0 : this.fanout.readUInt32BE((firstByte - 1) * 4);
    let hi = this.fanout.readUInt32BE(firstByte * 4);
    while ((hi - lo) * ENTRY > BLOCK) {
      const mid = (lo + hi) >>> 1;
      const order = key.compare(this.read(mid, 1), 0, 32, 0, 32);
      if (order === 0) return this.pointer(this.read(mid, 1), 0);
      if (order < 0) hi = mid;
      else lo = mid + 1;
    }
    if (hi <= lo) return null;
    const block = this.read(lo, hi - lo);
    let low = 0,
      high = hi - lo;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = key.compare(block, mid * ENTRY, mid * ENTRY + 32, 0, 32);
      if (order === 0) return this.pointer(block, mid);
      if (order < 0) high = mid;
      else low = mid + 1;
    }
    return null;
  }

  /** Every entry, in key order (for merging, and the maintenance commands). */
  *entries(): Generator<IndexEntry> {
    const STEP = 4096;
    for (let from = 0; from < this.count; from += STEP) {
      const batch = Math.min(STEP, this.count - from);
      const buf = this.read(from, batch);
      for (let i = 0; i < batch; i++)
        yield { key: buf.toString("hex", i * ENTRY, i * ENTRY + 32), ...this.pointer(buf, i) };
    }
  }
}

/** The entries in key order, one per key (for a key given twice, the later in the array wins). */
export function latestSorted(entries: IndexEntry[]): IndexEntry[] {
  const latest = new Map<string, IndexEntry>();
  for (const e of entries) latest.set(e.key, e);
  return [...latest.values()].sort((left, right) =>
    left.key < right.key ? -1 : left.key > right.key ? 1 : 0,
  );
}

/** Two runs' entries in key order, one per key, the newer run's winning; read as they are merged. */
export function* mergeRuns(older: Run, newer: Run): Generator<IndexEntry> {
  const olderEntries = older.entries(),
    newerEntries = newer.entries();
  let olderEntry = olderEntries.next(),
    newerEntry = newerEntries.next();
  while (!olderEntry.done || !newerEntry.done) {
    if (newerEntry.done || (!olderEntry.done && olderEntry.value.key < newerEntry.value.key)) {
      yield olderEntry.value!;
      olderEntry = olderEntries.next();
    } else {
      if (!olderEntry.done && olderEntry.value.key === newerEntry.value.key)
        olderEntry = olderEntries.next();
      yield newerEntry.value;
      newerEntry = newerEntries.next();
    }
  }
}

/** Writes a run of entries given in key order, one per key, covering `logs`; streamed, whole or absent. */
export function writeRun(dir: string, seq: number, sorted: Iterable<IndexEntry>, logs: Coverage[]): string {
  const logNumber = new Map(logs.map((log, i) => [log.name, i]));
  const header = Buffer.from(JSON.stringify({ logs }));
  const head = Buffer.from(`${MAGIC}${header.length}\n`);
  const counts = new Array<number>(256).fill(0);
  const name = `run-${String(seq).padStart(12, "0")}-${randomBytes(4).toString("hex")}.idx`;
  const tmp = join(dir, `.tmp-${process.pid}-${name}`);
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, head);
    writeSync(fd, header);
    const fanoutAt = head.length + header.length;
    writeSync(fd, Buffer.alloc(FANOUT)); // filled in at the end
    const CHUNK = 4096;
    const chunk = Buffer.alloc(CHUNK * ENTRY);
    let inChunk = 0;
    for (const e of sorted) {
      const start = inChunk * ENTRY;
      chunk.write(e.key, start, 32, "hex");
      counts[chunk[start]!]!++;
      chunk.writeUInt32BE(logNumber.get(e.log)!, start + 32);
      chunk.writeUInt32BE(Math.floor(e.offset / 2 ** 32), start + 36);
      chunk.writeUInt32BE(e.offset % 2 ** 32, start + 40);
      chunk.writeUInt32BE(e.payloadLength, start + 44);
      if (++inChunk === CHUNK) {
        writeSync(fd, chunk);
        inChunk = 0;
      }
    }
    if (inChunk > 0) writeSync(fd, chunk, 0, inChunk * ENTRY);
    const fanout = Buffer.alloc(FANOUT);
    let total = 0;
    for (let firstByte = 0; firstByte < 256; firstByte++)
      fanout.writeUInt32BE((total += counts[firstByte]!), firstByte * 4);
    writeSync(fd, fanout, 0, FANOUT, fanoutAt);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, join(dir, name));
  return name;
}
