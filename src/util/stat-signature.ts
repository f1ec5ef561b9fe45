// A file's stat signature: what the stat cache and the code memo trust in place of rereading a file. The
// ctime is what a writer cannot set back: a file edited in any way (its mtime put back or not) has a new
// one.
import type { Stats } from "node:fs";

export interface StatSignature {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

export const signatureOf = (st: Stats): StatSignature => ({
  size: st.size,
  mtimeMs: st.mtimeMs,
  ctimeMs: st.ctimeMs,
  ino: st.ino,
});

export const sameSignature = (e: StatSignature, st: Stats): boolean =>
  e.size === st.size && e.mtimeMs === st.mtimeMs && e.ctimeMs === st.ctimeMs && e.ino === st.ino;

/** A file modified within the clock's resolution could change again unseen: its stat is not trusted yet. */
const SETTLE_MS = 2000;
export const settled = (st: Stats): boolean => Date.now() - Math.max(st.mtimeMs, st.ctimeMs) > SETTLE_MS;

/** Whether a file was last changed at least the settling time before `t` (ms since the epoch). */
export const settledBefore = (mtimeMs: number, ctimeMs: number, time: number): boolean =>
  time - Math.max(mtimeMs, ctimeMs) > SETTLE_MS;
