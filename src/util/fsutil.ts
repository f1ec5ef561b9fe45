import {
  mkdirSync,
  renameSync,
  writeFileSync,
  rmSync,
  openSync,
  closeSync,
  fsyncSync,
  randomBytes,
  readFileSync,
} from "./builtins.js";
import { dirname, join } from "node:path";

// Folders made once per process; temp names unique per process (pid + random prefix + counter).
const madeDirs = new Set<string>();
function ensureDir(dir: string): void {
  if (madeDirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
}
let prefix: string | undefined; // made on first use, so that a command that writes nothing loads no crypto
let counter = 0;

export function tempName(dir: string): string {
  ensureDir(dir);
  prefix ??= `.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  return join(dir, `${prefix}-${counter++}`);
}

/** Writes a file so that a reader sees the old content or the new one, never a half: temp file + rename.
 *  `durable` adds an fsync before the rename (survives a power loss, not only a killed process). */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  tmpDir = dirname(path),
  durable = true,
): void {
  ensureDir(dirname(path));
  const tmp = tempName(tmpDir);
  try {
    writeFileSync(tmp, data);
    if (durable) {
      const fd = openSync(tmp, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Whether a process of this host runs, is gone, or is a zombie: killed, not yet reaped by its parent,
 *  so kill(pid, 0) still succeeds though it will never run again (Linux: state Z in /proc/<pid>/stat). */
export function processState(pid: number): "alive" | "gone" | "zombie" {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it exists, owned by someone else
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return "gone";
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return "alive"; // no /proc (macOS), or it ended just now: kill(pid, 0) is all there is to go by
  }
  // "pid (comm) S …": the command may hold spaces and parentheses, so the state follows the last ")".
  const state = stat.slice(stat.lastIndexOf(")") + 1).trim()[0];
  return state === "Z" || state === "X" ? "zombie" : "alive";
}

/** Whether a process of this host still runs (a folder or lock left by a killed build is judged by it). */
export function processAlive(pid: number): boolean {
  return processState(pid) === "alive";
}
