// Paired comparison of two full runs of one spec, item by item (the voice-command document's compare.py).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pairedComparison, type RngName } from "../stats/intervals.js";
import { metricsProblem, readResultJson, readResultLines } from "../util/result-files.js";
import { UsageError } from "./args.js";

interface RunMetrics {
  slug: string;
  spec_hash: string;
  partial: boolean;
  incomplete?: boolean;
  model: string | null;
}
interface ItemRow {
  id: string;
  meta: { subset: string; group: string };
  verdicts: Record<string, unknown>;
}

function readRun(dir: string): { m: RunMetrics; items: ItemRow[] } {
  const mf = join(dir, "metrics.json"),
    itf = join(dir, "items.jsonl");
  if (!existsSync(mf) || !existsSync(itf))
    throw new UsageError(`${dir} is not a result directory (it needs metrics.json and items.jsonl)`);
  const m = readResultJson(mf);
  const problem = metricsProblem(m);
  if (problem)
    throw new UsageError(`${mf} is not a run's result (${problem}): rebuild it or pick another run`);
  return { m: m as RunMetrics, items: readResultLines<ItemRow>(itf) };
}

export interface CompareOptions {
  slug: string;
  verdict: string;
  resamples: number;
  seed: number;
  rng: RngName;
  level: number;
}

export function compareRuns(dirA: string, dirB: string, o: CompareOptions) {
  const A = readRun(dirA),
    B = readRun(dirB);
  for (const [dir, r] of [
    [dirA, A],
    [dirB, B],
  ] as const) {
    if (r.m.slug !== o.slug) throw new UsageError(`${dir} is a run of ${r.m.slug}, not of ${o.slug}`);
    if (r.m.partial)
      throw new UsageError(`${dir} is a partial run (--subset or --limit); partial runs are never compared`);
  }
  if (A.m.spec_hash !== B.m.spec_hash)
    throw new UsageError(
      `the runs are of different specs (spec_hash ${A.m.spec_hash.slice(0, 12)}… and ${B.m.spec_hash.slice(0, 12)}…)`,
    );
  const idsA = A.items
      .map((i) => i.id)
      .sort()
      .join("\n"),
    idsB = B.items
      .map((i) => i.id)
      .sort()
      .join("\n");
  if (idsA !== idsB) throw new UsageError("the runs do not hold the same items");
  const subsets = [...new Set(A.items.map((i) => i.meta.subset))];
  // Items with an API error on either side have no verdict and are left out of both.
  const errored = new Set([...A.items, ...B.items].filter((i) => i.verdicts.api_error).map((i) => i.id));
  const rows = subsets.map((subset) => {
    const pick = (items: ItemRow[]) =>
      items
        .filter((i) => i.meta.subset === subset && !errored.has(i.id))
        .map((i) => ({ id: i.id, value: i.verdicts[o.verdict] ? 1 : 0, cluster: i.meta.group }));
    const a = pick(A.items),
      b = pick(B.items);
    const r = pairedComparison(a, b, o);
    const mean = (xs: { value: number }[]) => xs.reduce((s, x) => s + x.value, 0) / xs.length;
    return {
      subset,
      n: r.n,
      a: mean(a),
      b: mean(b),
      diff_pp: r.diff_pp,
      lo: r.lo,
      hi: r.hi,
      mcnemar_p: r.mcnemar_p,
      b_count: r.b,
      c_count: r.c,
    };
  });
  return {
    spec_hash: A.m.spec_hash,
    a: { dir: dirA, model: A.m.model },
    b: { dir: dirB, model: B.m.model },
    verdict: o.verdict,
    resamples: o.resamples,
    seed: o.seed,
    rng: o.rng,
    left_out_api_errors: errored.size,
    rows,
  };
}

export function compareVoiceCommand(dirA: string, dirB: string) {
  return compareRuns(dirA, dirB, {
    slug: "kor-surgical-robot-voice-command",
    verdict: "exact",
    resamples: 2000,
    seed: 0,
    rng: "python",
    level: 0.95,
  });
}
