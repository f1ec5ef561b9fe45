// An exclusive lock between processes: a file created with O_EXCL holding its owner's pid and host.
// A lock whose owner is gone (a killed build on this host) is taken at once; one of unknown owner (another
// host sharing the folder, or an unreadable file) once it has not changed for `staleMs`; a holder that may
// hold it long keeps its mtime fresh (`heartbeatMs`)
// so that such a waiter does not take it from a live build.
import {
  closeSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
  mkdirSync,
} from "./builtins.js";
import { dirname } from "node:path";
import { hostname } from "node:os";
import { processAlive } from "./fsutil.js";

export interface FileLockOptions {
  /** A lock of unknown owner is taken after this long without change. */
  staleMs: number;
  /** Give up after this long (an Error naming the lock); without it, wait while the owner lives. */
  maxWaitMs?: number;
  /** Called once, when the lock is found held by a live owner (its "pid host"). */
  onWait?: (owner: string) => void;
  /** While held, touch the file this often. */
  heartbeatMs?: number;
  pollMs?: number;
}

/** Takes the lock (waiting as the options say); returns the function that releases it. */
export async function acquireFileLock(lockPath: string, options: FileLockOptions): Promise<() => void> {
  const me = `${process.pid} ${hostname()}\n`;
  const started = Date.now();
  let told = false;
  mkdirSync(dirname(lockPath), { recursive: true });
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      try {
        writeSync(fd, me);
      } catch (e) {
        // A lock without its owner (the disk filled up) would make the next build wait for nobody.
        closeSync(fd);
        rmSync(lockPath, { force: true });
        throw e;
      }
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const owner = abandoned(lockPath, options.staleMs);
      if (owner === null) continue;
      if (options.maxWaitMs !== undefined && Date.now() - started > options.maxWaitMs)
        throw new Error(`${lockPath} is held by another build (${owner})`);
      if (!told) options.onWait?.(owner);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 50));
    }
  }
  const beat = options.heartbeatMs
    ? setInterval(() => {
        try {
          const now = new Date();
          utimesSync(lockPath, now, now);
        } catch {
          /* taken from us as stale: nothing to refresh */
        }
      }, options.heartbeatMs)
    : null;
  beat?.unref();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (beat) clearInterval(beat);
    try {
      if (readFileSync(lockPath, "utf8") === me) rmSync(lockPath, { force: true });
    } catch {
      /* already gone */
    }
  };
}

/** Removes the lock file when its owner is gone and returns null (try again at once); else its owner. */
function abandoned(lockPath: string, staleMs: number): string | null {
  let text: string, mtimeMs: number;
  try {
    text = readFileSync(lockPath, "utf8");
    mtimeMs = statSync(lockPath).mtimeMs;
  } catch {
    return null; // released meanwhile
  }
  const match = /^(\d+) (\S+)\n$/.exec(text);
  const here = match !== null && match[2] === hostname();
  const gone = here ? !processAlive(Number(match[1])) : Date.now() - mtimeMs > staleMs;
  if (!gone) return match ? `pid ${match[1]} on ${match[2]}` : "an unknown owner";
  // Only the file that was judged: another process may have taken the lock since.
  try {
    if (readFileSync(lockPath, "utf8") === text) rmSync(lockPath, { force: true });
  } catch {
    /* gone */
  }
  return null;
}
