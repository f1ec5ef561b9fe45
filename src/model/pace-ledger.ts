// Where a route's pace is kept: in this process, or in a small ledger file that the builds of one machine
// sending to one route share (cache/pace/<hash of the route's name and URL>.json), so that two builds
// together keep to one limit. The file holds only the pace's numbers (no URL, no header, no key); each
// change is made under a lock file held for the moment of a read and a write.
import {
  closeSync,
  createHash,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "../util/builtins.js";
import { join } from "node:path";
import { freshPace, type PaceState } from "./pace.js";

/** A lock file older than this is left by a build that died holding it (a change takes milliseconds). */
const STALE_LOCK_MS = 5000;
/** A ledger not changed for this long is forgotten: the limit may have changed since. */
const FORGOTTEN_MS = 10 * 60_000;
/** How often a process that is not pacing looks whether another has learned a pace. */
const REFRESH_MS = 250;

export interface PaceStore {
  /** The state as last read: another build's change may show up to REFRESH_MS late. */
  peek(now: number): PaceState;
  /** Applies `change` to the current state (under the ledger's lock) and returns what it returns. */
  update<T>(change: (state: PaceState) => T): Promise<T>;
}

export class MemoryPace implements PaceStore {
  private readonly state = freshPace();
  peek(): PaceState {
    return this.state;
  }
  update<T>(change: (state: PaceState) => T): Promise<T> {
    return Promise.resolve(change(this.state));
  }
}

/** The ledger's file name for a route: a hash, so that nothing of the route is written in the clear. */
export function ledgerName(routeName: string, baseUrl: string): string {
  return createHash("sha256").update(`${routeName}\n${baseUrl}`).digest("hex").slice(0, 32) + ".json";
}

export class LedgerPace implements PaceStore {
  private state = freshPace();
  private readAt = -Infinity;
  private readonly file: string;
  private readonly lock: string;

  constructor(dir: string, name: string) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, name);
    this.lock = `${this.file}.lock`;
  }

  peek(now: number): PaceState {
    if (now - this.readAt >= REFRESH_MS) {
      this.state = this.read();
      this.readAt = now;
    }
    return this.state;
  }

  async update<T>(change: (state: PaceState) => T): Promise<T> {
    await this.acquire();
    try {
      this.state = this.read();
      const result = change(this.state);
      const temp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temp, JSON.stringify({ ...this.state, updated: Date.now() }));
      renameSync(temp, this.file);
      this.readAt = Date.now();
      return result;
    } finally {
      rmSync(this.lock, { force: true });
    }
  }

  private read(): PaceState {
    try {
      const kept = JSON.parse(readFileSync(this.file, "utf8")) as PaceState & { updated?: number };
      if (typeof kept.updated !== "number" || Date.now() - kept.updated > FORGOTTEN_MS) return freshPace();
      const { updated: _updated, ...state } = kept;
      return { ...freshPace(), ...state };
    } catch {
      return freshPace(); // none yet, or unreadable (a crash mid-write is ruled out by the rename)
    }
  }

  private async acquire(): Promise<void> {
    for (;;) {
      try {
        closeSync(openSync(this.lock, "wx"));
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        if (this.stale()) rmSync(this.lock, { force: true });
        else await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
  }

  private stale(): boolean {
    try {
      return Date.now() - statSync(this.lock).mtimeMs > STALE_LOCK_MS;
    } catch {
      return false; // released meanwhile
    }
  }
}
