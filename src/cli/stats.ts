// medbench stats ci | paired: the reference procedures on JSONL files, printing what stats_ref.py prints.
import { readFileSync, statSync } from "../util/builtins.js";
import { MAX_INPUT_BYTES } from "../stats/limits.js";
import { bootstrapCi, pairedComparison, type RngName } from "../stats/intervals.js";
import { UsageError } from "../errors.js";

type Row = Record<string, unknown>;

/** The rows of a JSONL file: a regular file of at most MAX_INPUT_BYTES, UTF-8, one JSON object a line. */
function readRows(path: string): { row: Row; line: number }[] {
  let bytes: Buffer;
  try {
    // A FIFO or a device (`--input /dev/zero`) never ends: only a regular file is read, and only so much.
    const st = statSync(path);
    if (!st.isFile()) throw new UsageError(`${path} is not a regular file (a JSONL file is)`);
    if (st.size > MAX_INPUT_BYTES)
      throw new UsageError(
        `${path} holds ${st.size} bytes, more than stats reads (${MAX_INPUT_BYTES} bytes)`,
      );
    bytes = readFileSync(path);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot read ${path} (${(e as NodeJS.ErrnoException).code})`);
  }
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const rows: { row: Row; line: number }[] = [];
  let start = 0;
  for (let i = 1; start < bytes.length; i++) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl < 0 ? bytes.length : nl;
    let line: string;
    try {
      line = utf8.decode(bytes.subarray(start, end));
    } catch {
      throw new UsageError(`${path}:${i}: not UTF-8 text (save the file as UTF-8)`);
    }
    start = end + 1;
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      row = undefined;
    }
    if (row === null || typeof row !== "object" || Array.isArray(row))
      throw new UsageError(
        `${path}:${i}: not a JSON object (each line holds one, e.g. {"id": "a", "ok": true})`,
      );
    rows.push({ row: row as Row, line: i });
  }
  return rows;
}

/** A value is a verdict (true/false) or a score in [0, 1]: the intervals are of proportions and means of
 *  scores (the Clopper-Pearson fallback and McNemar's counts assume so). */
function asNumber(v: unknown, where: string): number {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1) return v;
  if (typeof v === "number")
    throw new UsageError(`${where}: value ${String(v)} is not in [0, 1] (a verdict or a score is)`);
  throw new UsageError(`${where}: value ${JSON.stringify(v)} is neither a boolean nor a number`);
}

/** A row's field by name, or by a dotted path into nested objects (`verdicts.exact` of a run's
 *  items.jsonl); a name that holds a dot itself is taken as it is first. */
function field(row: Row, key: string, where: string): unknown {
  if (key in row) return row[key];
  let v: unknown = row;
  for (const part of key.split(".")) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !(part in v))
      throw new UsageError(`${where}: no field \`${key}\``);
    v = (v as Row)[part];
  }
  return v;
}

/** An id or a cluster id: a string, a boolean or a whole number that a double holds exactly (a 30-digit
 *  number would silently merge with its neighbours). */
function idOf(v: unknown, where: string, key: string): string {
  if (typeof v === "number" && !Number.isSafeInteger(v))
    throw new UsageError(
      `${where}: \`${key}\` ${String(v)} is not a whole number below 2^53 (write ids as strings)`,
    );
  if (v === null || typeof v === "object")
    throw new UsageError(`${where}: \`${key}\` is ${JSON.stringify(v)}; an id is a string or a number`);
  return clusterId(v);
}

// Python dict keys: 1, 1.0 and True are one key; "1" is another.
const clusterId = (v: unknown): string =>
  typeof v === "boolean" ? String(Number(v)) : typeof v === "number" ? `n${v}` : JSON.stringify(v);

export interface StatsArgs {
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
  value: string;
  cluster?: string;
}

export function statsCi(input: string, a: StatsArgs): object {
  const rows = readRows(input);
  if (!rows.length) throw new UsageError(`${input}: no rows`);
  const r = bootstrapCi(
    rows.map(({ row, line }) => {
      const where = `${input}:${line}`;
      return {
        value: asNumber(field(row, a.value, where), where),
        cluster: a.cluster ? idOf(field(row, a.cluster, where), where, a.cluster) : null,
      };
    }),
    a,
  );
  return {
    n: r.n,
    clusters: r.clusters,
    point: r.point,
    lo: r.lo,
    hi: r.hi,
    method: r.method,
    rng: r.rng,
    seed: r.seed,
    resamples: r.resamples,
    level: r.level,
  };
}

export function statsPaired(files: { a: string; b: string; id: string }, a: StatsArgs): object {
  const { a: fileA, b: fileB, id } = files;
  const rowsA = readRows(fileA),
    rowsB = readRows(fileB);
  const conv = (rows: { row: Row; line: number }[], file: string, withCluster: boolean) =>
    rows.map(({ row, line }) => {
      const where = `${file}:${line}`;
      const cluster = a.cluster && (withCluster || a.cluster in row) ? a.cluster : null;
      return {
        id: idOf(field(row, id, where), where, id),
        value: asNumber(field(row, a.value, where), where),
        cluster: cluster ? idOf(field(row, cluster, where), where, cluster) : null,
      };
    });
  const rowsOfA = conv(rowsA, fileA, true);
  const rowsOfB = conv(rowsB, fileB, false);
  // Clusters come from A; a B row that names another cluster for the same item pairs unlike with unlike.
  const inA = new Map(rowsOfA.map((r, i) => [r.id, i]));
  for (const [i, r] of rowsOfB.entries()) {
    const j = inA.get(r.id);
    if (r.cluster === null || j === undefined || rowsOfA[j]!.cluster === r.cluster) continue;
    const { row, line } = rowsB[i]!;
    throw new UsageError(
      `${fileB}:${line}: item ${JSON.stringify(row[id])} is in cluster ${JSON.stringify(row[a.cluster!])}, ` +
        `but in cluster ${JSON.stringify(rowsA[j]!.row[a.cluster!])} in ${fileA}:${rowsA[j]!.line} ` +
        "(the two files must group the items alike)",
    );
  }
  let r;
  try {
    r = pairedComparison(rowsOfA, rowsOfB, a);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return {
    n: r.n,
    clusters: r.clusters,
    diff_pp: r.diff_pp,
    lo: r.lo,
    hi: r.hi,
    mcnemar_p: r.mcnemar_p,
    b: r.b,
    c: r.c,
    rng: r.rng,
    seed: r.seed,
    resamples: r.resamples,
    level: r.level,
  };
}
