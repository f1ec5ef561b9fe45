// Every path a build consulted on disk (read, listed, or found absent), so that the next build can tell by
// their stat signatures alone that none of them changed (src/cli/noop-record.ts). Caches of derived facts
// (the stat cache, the code memo, the parsed-spec cache) are not listed: what they were derived from is.
import { resolve } from "node:path";

const paths = new Set<string>();

export function consult(path: string): void {
  paths.add(resolve(path));
}

export const consultedPaths = (): string[] => [...paths].sort();
