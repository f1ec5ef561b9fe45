// What names the shared remote and what this process opened of it, apart from the store's client
// (./store.ts, its claims and pacing: about 4 ms of CPU to load, with node:os), which a process loads only
// when MEDBENCH_REMOTE is set (src/runner/store/cache.ts openCache).
import { DiagnosticError } from "../errors.js";

export interface RemoteConfig {
  url: string; // s3://bucket/prefix, as given
  bucket: string;
  prefix: string; // "" or "a/b/" (with the trailing slash)
  endpoint?: string;
}

/** MEDBENCH_REMOTE parsed, or null when it is unset; a malformed value is a user mistake. */
export function remoteConfig(env: Record<string, string | undefined>): RemoteConfig | null {
  const url = env.MEDBENCH_REMOTE?.trim();
  if (!url) return null;
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match)
    throw new DiagnosticError([
      {
        file: "$MEDBENCH_REMOTE",
        message: `${JSON.stringify(url)} is not an s3://BUCKET/PREFIX address`,
        fix: "set it like s3://team-bucket/medbench (and MEDBENCH_REMOTE_ENDPOINT for a non-AWS store)",
      },
    ]);
  const prefix = (match[2] ?? "").replace(/^\/+|\/+$/g, "");
  const endpoint = env.MEDBENCH_REMOTE_ENDPOINT?.trim() || undefined;
  return { url, bucket: match[1]!, prefix: prefix ? `${prefix}/` : "", ...(endpoint ? { endpoint } : {}) };
}

/** A stage manifest's and a model reply's names in the store (the local cache's layout), and a reply's
 *  claim (./claims.ts). */
export const stageName = (key: string) => `stages/${key}.json`;
export const replyName = (folder: string, key: string) => `replies/${folder}/${key}`;
export const claimName = (folder: string, key: string) => `claims/${folder}/${key}`;

/** A remote opened in this process: where, whose keyed objects it read, and its uploads to wait for. */
export interface OpenedRemote {
  readonly config: RemoteConfig;
  /** Keyed object name -> the machine that wrote it, for those read. */
  readonly writers: Map<string, string>;
  settle(): Promise<void>;
}

/** The remotes opened in this process (./store.ts openRemote adds each). */
export const opened = new Set<OpenedRemote>();

/** The keyed objects under a folder (`stages/`, `replies/<namespace>/`) read from a remote in this process,
 *  by the machine that wrote them: writer -> names under the folder. */
export function readByWriter(folder: string): { remote: string; writers: Map<string, string[]> } | null {
  const writers = new Map<string, string[]>();
  let remote: string | null = null;
  for (const store of opened)
    for (const [key, writer] of store.writers) {
      if (!key.startsWith(folder)) continue;
      remote = store.config.url;
      writers.set(writer, [...(writers.get(writer) ?? []), key.slice(folder.length)]);
    }
  return remote === null ? null : { remote, writers };
}

/** The replies of a namespace folder read from a remote in this process, by writer (request keys). */
export const repliesByWriter = (folder: string) => readByWriter(replyName(folder, ""));

/** Waits for the uploads of every remote opened in this process (before it exits). */
export async function settleRemotes(): Promise<void> {
  await Promise.all([...opened].map((store) => store.settle()));
}
