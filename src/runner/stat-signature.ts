// A file's stat signature: what the stat cache and the code memo trust in place of rereading a file. The
// ctime is what a writer cannot set back: a file edited in any way (its mtime put back or not) has a new one.
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
export const settled = (st: Stats): boolean => Date.now() - Math.max(st.mtimeMs, st.ctimeMs) > 2000;
