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
function asNumber(value: unknown, where: string): number {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1) return value;
  if (typeof value === "number")
    throw new UsageError(`${where}: value ${String(value)} is not in [0, 1] (a verdict or a score is)`);
  throw new UsageError(`${where}: value ${JSON.stringify(value)} is neither a boolean nor a number`);
}

/** A row's field by name, or by a dotted path into nested objects (`verdicts.exact` of a run's
 *  items.jsonl); a name that holds a dot itself is taken as it is first. */
function field(row: Row, key: string, where: string): unknown {
  if (key in row) return row[key];
  let value: unknown = row;
  for (const part of key.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value) || !(part in value))
      throw new UsageError(`${where}: no field \`${key}\``);
    value = (value as Row)[part];
  }
  return value;
}

/** An id or a cluster id: a string, a boolean or a whole number that a double holds exactly (a 30-digit
 *  number would silently merge with its neighbours). */
function idOf(value: unknown, where: string, key: string): string {
  if (typeof value === "number" && !Number.isSafeInteger(value))
    throw new UsageError(
      `${where}: \`${key}\` ${String(value)} is not a whole number below 2^53 (write ids as strings)`,
    );
  if (value === null || typeof value === "object")
    throw new UsageError(`${where}: \`${key}\` is ${JSON.stringify(value)}; an id is a string or a number`);
  return clusterId(value);
}

// Python dict keys: 1, 1.0 and True are one key; "1" is another.
const clusterId = (value: unknown): string =>
  typeof value === "boolean"
    ? String(Number(value))
    : typeof value === "number"
      ? `n${value}`
      : JSON.stringify(value);

export interface StatsArgs {
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
  value: string;
  cluster?: string;
}

export function statsCi(input: string, args: StatsArgs): object {
  const rows = readRows(input);
  if (!rows.length) throw new UsageError(`${input}: no rows`);
  const ci = bootstrapCi(
    rows.map(({ row, line }) => {
      const where = `${input}:${line}`;
      return {
        value: asNumber(field(row, args.value, where), where),
        cluster: args.cluster ? idOf(field(row, args.cluster, where), where, args.cluster) : null,
      };
    }),
    args,
  );
  return {
    n: ci.n,
    clusters: ci.clusters,
    point: ci.point,
    lo: ci.lo,
    hi: ci.hi,
    method: ci.method,
    rng: ci.rng,
    seed: ci.seed,
    resamples: ci.resamples,
    level: ci.level,
  };
}

export function statsPaired(files: { a: string; b: string; id: string }, args: StatsArgs): object {
  const { a: fileA, b: fileB, id } = files;
  const rowsA = readRows(fileA),
    rowsB = readRows(fileB);
  const conv = (rows: { row: Row; line: number }[], file: string, withCluster: boolean) =>
    rows.map(({ row, line }) => {
      const where = `${file}:${line}`;
      const cluster = args.cluster && (withCluster || args.cluster in row) ? args.cluster : null;
      return {
        id: idOf(field(row, id, where), where, id),
        value: asNumber(field(row, args.value, where), where),
        cluster: cluster ? idOf(field(row, cluster, where), where, cluster) : null,
      };
    });
  const rowsOfA = conv(rowsA, fileA, true);
  const rowsOfB = conv(rowsB, fileB, false);
  // Clusters come from A; a B row that names another cluster for the same item pairs unlike with unlike.
  const inA = new Map(rowsOfA.map((rowA, i) => [rowA.id, i]));
  for (const [i, rowB] of rowsOfB.entries()) {
    const atA = inA.get(rowB.id);
    if (rowB.cluster === null || atA === undefined || rowsOfA[atA]!.cluster === rowB.cluster) continue;
    const { row, line } = rowsB[i]!;
    throw new UsageError(
      `${fileB}:${line}: item ${JSON.stringify(row[id])} ` +
        `is in cluster ${JSON.stringify(row[args.cluster!])}, ` +
        `but in cluster ${JSON.stringify(rowsA[atA]!.row[args.cluster!])} in ${fileA}:${rowsA[atA]!.line} ` +
        "(the two files must group the items alike)",
    );
  }
  let comparison;
  try {
    comparison = pairedComparison(rowsOfA, rowsOfB, args);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return {
    n: comparison.n,
    clusters: comparison.clusters,
    diff_pp: comparison.diff_pp,
    lo: comparison.lo,
    hi: comparison.hi,
    mcnemar_p: comparison.mcnemar_p,
    b: comparison.b,
    c: comparison.c,
    rng: comparison.rng,
    seed: comparison.seed,
    resamples: comparison.resamples,
    level: comparison.level,
  };
}
