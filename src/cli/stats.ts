// medbench stats ci | paired: the reference procedures on JSONL files, printing what stats_ref.py prints.
import { readFileSync } from "../util/builtins.js";
import { bootstrapCi, pairedComparison, type RngName } from "../stats/intervals.js";
import { UsageError } from "./args.js";

type Row = Record<string, unknown>;

function readRows(path: string): Row[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${path} (${(e as NodeJS.ErrnoException).code})`);
  }
  return text
    .split("\n")
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.trim())
    .map(({ l, i }) => {
      try {
        return JSON.parse(l) as Row;
      } catch {
        throw new UsageError(`${path}:${i + 1}: not a JSON object`);
      }
    });
}

function asNumber(v: unknown, where: string): number {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return v;
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
    rows.map((row, i) => ({
      value: asNumber(field(row, a.value, `${input}:${i + 1}`), `${input}:${i + 1}`),
      cluster: a.cluster ? clusterId(field(row, a.cluster, `${input}:${i + 1}`)) : null,
    })),
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
  const conv = (rows: Row[], file: string, withCluster: boolean) =>
    rows.map((row, i) => ({
      id: clusterId(field(row, id, `${file}:${i + 1}`)),
      value: asNumber(field(row, a.value, `${file}:${i + 1}`), `${file}:${i + 1}`),
      cluster: withCluster && a.cluster ? clusterId(field(row, a.cluster, `${file}:${i + 1}`)) : null,
    }));
  let r;
  try {
    r = pairedComparison(conv(rowsA, fileA, true), conv(rowsB, fileB, false), a);
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
