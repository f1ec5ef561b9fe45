// A no-op build answered from its record. After a build in which every stage was fresh, the stat signature
// of every path it consulted (src/util/consulted.ts: spec, code, lock, release files, cache entries,
// results) is written down with the events it emitted. The next build with the same arguments, folder,
// environment and Node that finds every signature unchanged replays those events instead of keying the
// stages again: the trust the stat cache and the code memo already place in a stat signature
// (src/util/stat-signature.ts). One path changed, and the build keys every stage as usual.
import { readdirSync, readFileSync, statSync } from "../util/builtins.js";
import type { Stats } from "node:fs";
import { dirname, join } from "node:path";
import type { BuildEvent } from "../contract/events.js";
import type { Logger } from "../log/loggers.js";
import { consultedEnv, consultedPaths } from "../util/consulted.js";
import { sha256Hex } from "../hash/sha256.js";
import { writeFileAtomic } from "../util/fsutil.js";
import { settledBefore } from "../util/stat-signature.js";
import { installRoot } from "../util/paths.js";

// 2: the record carries a checksum of its content; 3: and the variables tasks declare; 4: the checksum is of
// the file's bytes, in its last field
const VERSION = 4;
/** What a no-op's outcome depends on besides files: the environment variables a build reads (a build
 *  with MEDBENCH_REMOTE set is never recorded: a shared cache is not a local file). */
const ENV = ["MEDBENCH_DATA_DIR", "NO_COLOR", "TERM"];

/** size, mtimeMs, ctimeMs, inode; null for a path that was absent. */
type Signature = [number, number, number, number] | null;

interface NoopRecord {
  version: number;
  /** The checksum of the file's bytes before it, the last field: an edited record (its events, above all)
   *  is not replayed. */
  check: string;
  key: string;
  files: Record<string, Signature>;
  /** The variables a task declares (a stage's key holds them): name -> sha256 of its value, or null. */
  env: Record<string, string | null>;
  events: BuildEvent[];
  stdout: string;
}

export interface Replay {
  events: BuildEvent[];
  stdout: string;
  files: number;
}

/** What must be the same for a record to answer: arguments, folder, Node, the medbench install (another
 *  install's build is not this one's, even when its own files are unchanged) and the variables above. */
export function recordKey(argv: string[]): string {
  const env = Object.fromEntries(ENV.map((name) => [name, process.env[name] ?? null]));
  return JSON.stringify({ argv, cwd: process.cwd(), node: process.version, install: installRoot(), env });
}

/** The events and stdout of the last no-op build with this key, if nothing it consulted changed since. */
export function replayable(cacheDir: string, key: string): Replay | null {
  let record: NoopRecord;
  try {
    const bytes = readFileSync(recordFile(cacheDir, key));
    const check = CHECK.exec(bytes.toString("latin1", bytes.length - CHECK_LENGTH))?.[1];
    if (!check || check !== checksum(bytes, bytes.length - CHECK_LENGTH)) return null; // damaged or edited
    record = JSON.parse(bytes.toString("utf8")) as NoopRecord;
  } catch {
    return null; // none yet, or damaged: the build keys its stages
  }
  if (record.version !== VERSION || record.key !== key) return null;
  const paths = Object.keys(record.files);
  for (const path of paths) if (!unchanged(path, record.files[path]!)) return null;
  for (const [name, hash] of Object.entries(record.env))
    if (valueHash(process.env[name]) !== hash) return null;
  return { events: record.events, stdout: record.stdout, files: paths.length };
}

/** Replays the last build when it was a no-op and nothing it consulted changed since: its events to the
 *  logger, then the stdout to print; null when it cannot. */
export function replayNoop(cacheDir: string, key: string, logger: Logger): string | null {
  const replay = replayable(cacheDir, key);
  if (!replay) return null;
  const done = replay.events.length - 1; // the last event is build-done
  for (const e of replay.events.slice(0, done)) logger.log(e);
  logger.log({
    type: "info",
    message:
      `nothing changed since the last build (${replay.files} files, by stat): ` +
      "its stages were not keyed again (--rekey to key them)",
  });
  logger.log(replay.events[done]!);
  return replay.stdout;
}

/** The events to record of a build that was a no-op (every stage fresh, medbench.lock unchanged, no
 *  warning), from its build-start on: what came before (waiting for another build of this spec) is the
 *  run's, not the build's. Null for any other build. */
export function noopEvents(
  events: BuildEvent[],
  report: { stages: { status: string }[]; lockChanged: boolean },
): BuildEvent[] | null {
  if (events.some((e) => e.type === "warning") || report.lockChanged) return null;
  if (!report.stages.every((stage) => stage.status === "fresh")) return null;
  const start = events.findIndex((e) => e.type === "build-start");
  return events.slice(Math.max(0, start));
}

/** What `status` says of every stage when a no-op build of the same arguments (--json or --quiet added
 *  after the spec or at the end, as a build is usually run) replays: each fresh, with its recorded key. */
export function freshFromRecord(
  cacheDir: string,
  statusArgv: string[],
): { spec: string; specHash: string; stages: { name: string; kind: string; key: string }[] } | null {
  const base = statusArgv.filter((arg) => arg !== "--json");
  const [first, ...rest] = base;
  if (first === undefined) return null;
  const variants = [
    base,
    ...["--json", "--quiet"].flatMap((flag) => [
      [first, flag, ...rest],
      [...base, flag],
    ]),
  ];
  for (const argv of variants) {
    const replay = replayable(cacheDir, recordKey(argv));
    if (!replay) continue;
    const start = replay.events.find((e) => e.type === "build-start");
    const done = replay.events.flatMap((e) => (e.type === "stage-done" ? [e] : []));
    if (!start || start.type !== "build-start" || done.length !== start.stages) continue;
    if (done.some((e) => e.status !== "fresh")) continue;
    return {
      spec: start.spec,
      specHash: start.specHash,
      stages: done.map((e) => ({ name: e.stage, kind: e.kind, key: e.key })),
    };
  }
  return null;
}

/** Records a build in which every stage was fresh, if nothing it consulted (nor medbench's compiled code)
 *  changed in the settling time before it started: a change made while it ran could go unseen. */
export function recordNoop(
  cacheDir: string,
  key: string,
  startedMs: number,
  events: BuildEvent[],
  stdout: string,
): void {
  const files: Record<string, Signature> = {};
  // A stat its reader trusted is the one recorded: were the file changed after it, the next build's stat
  // would differ. The others are taken now, after their reading: settled, nothing changed them meanwhile.
  const consulted = consultedPaths();
  for (const path of [...consulted.keys(), ...compiledFiles()]) {
    const trusted = consulted.get(path);
    const sig = trusted ?? signature(path);
    if (sig === UNREADABLE) return; // what cannot be stated cannot be compared next time
    // An absent path is judged by the folder it would be in: one removed while the build ran (after the
    // build read it) changed that folder, and must not be recorded as absent all along.
    const seen = sig ?? existingAncestor(path);
    if (!settledBefore(seen[1], seen[2], startedMs)) return;
    files[path] = sig;
  }
  const env = Object.fromEntries([...consultedEnv()].map(([name, value]) => [name, valueHash(value)]));
  const fields: Omit<NoopRecord, "check"> = { version: VERSION, key, files, env, events, stdout };
  const head = Buffer.from(JSON.stringify(fields).slice(0, -1)); // without its closing brace
  const text = `${head.toString()},"check":"${checksum(head)}"}`;
  const file = recordFile(cacheDir, key);
  try {
    if (readFileSync(file, "utf8") === text) return; // a --rekey build that found what was recorded
  } catch {
    /* none yet */
  }
  try {
    writeFileAtomic(file, text, join(cacheDir, "tmp"), false);
  } catch {
    /* a read-only cache: the next build keys its stages */
  }
}

/** medbench's compiled code and its launcher: the runner and the CLI run from there, not only the stages. */
function compiledFiles(): string[] {
  const root = installRoot();
  return ["bin", "dist"].flatMap((dir) => [
    join(root, dir),
    ...readdirSync(join(root, dir), { recursive: true, withFileTypes: true }).map((e) =>
      join(e.parentPath, e.name),
    ),
  ]);
}

/** The signature of the nearest folder above `path` that exists. */
function existingAncestor(path: string): NonNullable<Signature> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const sig = signature(dir);
    if (sig || dirname(dir) === dir) return sig ?? UNREADABLE;
  }
}

const signatureOf = (st: Stats): Signature => [st.size, st.mtimeMs, st.ctimeMs, st.ino];
/** A path that cannot be stated (a file where a folder was): a record never lists one. */
const UNREADABLE: NonNullable<Signature> = [-1, 0, 0, 0];

function signature(path: string): Signature {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st ? signatureOf(st) : null;
  } catch {
    return UNREADABLE;
  }
}

/** Whether `path` has the recorded signature (compared field by field: a replay stats every path). */
function unchanged(path: string, recorded: Signature): boolean {
  let st: Stats | undefined;
  try {
    st = statSync(path, { throwIfNoEntry: false });
  } catch {
    return false;
  }
  if (!st || !recorded) return !st && !recorded;
  const [size, mtimeMs, ctimeMs, ino] = recorded;
  return st.size === size && st.mtimeMs === mtimeMs && st.ctimeMs === ctimeMs && st.ino === ino;
}

/**
 * A checksum of a record file's bytes up to its last field, `,"check":"<8 hex digits>"}`, taken over
 * 32-bit words (FNV-1a's steps a word at a time: a replay reads the record in a cold process, where a
 * loop a character at a time took about 2 ms). Not sha256: a replayed build loads no crypto
 * (src/util/builtins.ts), and a checksum only has to catch an edit or damage; whoever recomputes it can
 * as well run medbench (no seal stops a forger: docs/hardening.md, on local state checked before use).
 */
function checksum(bytes: Uint8Array, end = bytes.length): string {
  const whole = end >>> 2;
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes.subarray(0, end));
  const words = new Int32Array(aligned.buffer, aligned.byteOffset, whole);
  let hash = 0x811c9dc5;
  for (let i = 0; i < whole; i++) hash = Math.imul(hash ^ words[i]!, 0x01000193);
  for (let i = whole * 4; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}
const CHECK = /^,"check":"([0-9a-f]{8})"\}$/;
const CHECK_LENGTH = ',"check":"00000000"}'.length;

/** A variable's value as recorded: its sha256 (it may be a secret; crypto loads only for a task that
 *  declares variables). */
const valueHash = (value: string | null | undefined): string | null =>
  value === null || value === undefined ? null : sha256Hex(value);

const recordFile = (cacheDir: string, key: string) => join(cacheDir, "noop", `${fnv1a(key)}.json`);

/** A short name for a key (the key itself is stored and compared: a collision only costs a miss). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}
