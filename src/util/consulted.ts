// Every path a build consulted on disk (read, listed, or found absent), so that the next build can tell by
// their stat signatures alone that none of them changed (src/cli/noop-record.ts). Caches of derived facts
// (the stat cache, the code memo, the parsed-spec cache) are not listed: what they were derived from is.
import type { Stats } from "node:fs";
import { resolve, sep } from "node:path";

/** What a no-op record compares of a path's stat: size, mtime, ctime (ms) and inode. */
export type TrustedStat = [size: number, mtimeMs: number, ctimeMs: number, ino: number];

/** Path -> the stat its reader trusted (taken before reading it), if the reader took one. Its signature
 *  only: a Stats object and its four Dates are about 550 bytes, 400 KB over a first build's paths. */
const paths = new Map<string, TrustedStat | undefined>();

export function consult(path: string, trusted?: Stats): void {
  const abs = normalAbsolute(path) ? path : resolve(path);
  if (trusted) paths.set(abs, [trusted.size, trusted.mtimeMs, trusted.ctimeMs, trusted.ino]);
  else if (!paths.has(abs)) paths.set(abs, undefined);
}

/** Whether `path` is already what resolve() makes of it: absolute, no `.` or `..` part, no empty part, no
 *  trailing slash. A build consults over a thousand paths, nearly all such, and resolve() walks each one
 *  character by character (about 3 µs a path in code not yet optimised). */
export const normalAbsolute = (path: string): boolean =>
  sep === "/" &&
  path.charCodeAt(0) === 47 &&
  !path.endsWith("/") &&
  !path.includes("//") &&
  !/\/\.\.?(\/|$)/.test(path);

export const consultedPaths = (): ReadonlyMap<string, TrustedStat | undefined> => paths;

/** Environment variable name -> its value as a stage's key read it (null: unset). */
const variables = new Map<string, string | null>();

/** The value of an environment variable a stage's key holds, noted for the no-op record. */
export function consultEnv(name: string): string | null {
  const value = process.env[name] ?? null;
  variables.set(name, value);
  return value;
}

export const consultedEnv = (): ReadonlyMap<string, string | null> => variables;
