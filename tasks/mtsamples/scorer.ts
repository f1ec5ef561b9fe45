// Per-instance jury scores, each judge's, their agreement, and the metric rows for the intervals.
import type {
  ItemVerdict,
  JudgedReplies,
  MetricRows,
  ParsedReply,
  ScoreOutput,
  TaskModule,
  TaskRequest,
} from "../task.js";
import type { Json } from "../../src/util/json.js";
import { medarcScore } from "./judge-readings.js";
import { helmReading } from "./readings.js";

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

function pearson(a: number[], b: number[]): number | null {
  if (a.length < 2) return null;
  const ma = mean(a),
    mb = mean(b);
  let sab = 0,
    saa = 0,
    sbb = 0;
  for (let i = 0; i < a.length; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return saa === 0 || sbb === 0 ? null : sab / Math.sqrt(saa * sbb);
}

export function score(
  requests: TaskRequest[],
  parsed: (ParsedReply | null)[],
  judged: JudgedReplies = [],
): ScoreOutput {
  const judges = judged.map((j) => j.judge);
  const items: ItemVerdict[] = requests.map((req, i) => {
    const p = parsed[i] ?? null;
    const meta = req.meta as { file: string; source: string };
    const verdicts: Record<string, Json> = { api_error: p === null, generated: p !== null && p.ok };
    if (p && p.ok) {
      const perJudge: Record<string, Json> = {};
      const helmAll: number[] = [];
      const medarc: number[] = [];
      let medarcRaised = false;
      for (const j of judged) {
        const text = j.replies[req.id];
        if (text === undefined || text === null) {
          perJudge[j.judge] = { call_failed: true };
          continue;
        } // left out, as MedARC does
        const h = helmReading(text);
        const m = medarcScore(text);
        if (h.ok) helmAll.push(...h.scores);
        medarc.push(m.score);
        if (m.crash) medarcRaised = true;
        perJudge[j.judge] = {
          helm_scores: h.ok ? h.scores : null,
          helm_ok: h.ok,
          score: m.score,
          valid_criteria: m.valid,
          // Where the reference code raises (docs/protocols/mtsamples.md): only then recorded.
          ...(!h.ok && h.crash ? { helm_raises: h.crash } : {}),
          ...(m.crash ? { medarc_raises: m.crash } : {}),
        };
      }
      verdicts.judges = perJudge;
      // MedARC: 0.0 when no judge answered, and when its reward function raised (verifiers scores it 0.0).
      verdicts.score = medarc.length && !medarcRaised ? mean(medarc) : 0;
      verdicts.helm_jury = helmAll.length ? mean(helmAll) : 1.0; // HELM: 1.0 when no judge succeeded
    }
    return {
      id: req.id,
      meta: { subset: "all", group: req.id, file: meta.file, source: meta.source },
      parsed: p ? p.value : null,
      verdicts,
    };
  });
  const scored = items.filter((it) => it.verdicts.generated);
  const rows = (f: (it: ItemVerdict) => number | null) =>
    scored.flatMap((it) => {
      const v = f(it);
      return v === null ? [] : [{ id: it.id, value: v, cluster: it.id }];
    });
  const judgeScore = (it: ItemVerdict, j: string) => {
    const v = (it.verdicts.judges as Record<string, { score?: number; call_failed?: boolean }>)[j];
    return v && !v.call_failed ? (v.score ?? null) : null;
  };
  const metrics: MetricRows[] = [
    {
      name: "judge_score",
      label:
        "judge score, normalised to [0, 1] (MedARC: mean over judges of the mean (s - 1) / 4 over criteria)",
      rows: rows((it) => it.verdicts.score as number),
      primary: true,
      ciFallback: "none",
    },
    {
      name: "helm_jury_score",
      label: "HELM jury score on the 1-5 scale (mean of int(score) over judges and criteria)",
      rows: rows((it) => it.verdicts.helm_jury as number),
      ciFallback: "none",
      unit: "score",
    },
    ...judges.map((j) => ({
      name: `judge_score:${j}`,
      label: `judge score of ${j} alone, [0, 1]`,
      rows: rows((it) => judgeScore(it, j)),
      ciFallback: "none" as const,
    })),
  ];
  const agreement: Record<string, Json> = {};
  for (let a = 0; a < judges.length; a++)
    for (let b = a + 1; b < judges.length; b++) {
      const both = scored.filter(
        (it) => judgeScore(it, judges[a]!) !== null && judgeScore(it, judges[b]!) !== null,
      );
      const xa = both.map((it) => judgeScore(it, judges[a]!)!),
        xb = both.map((it) => judgeScore(it, judges[b]!)!);
      agreement[`${judges[a]} vs ${judges[b]}`] = {
        n: both.length,
        pearson_r: pearson(xa, xb),
        mean_abs_diff: both.length ? mean(xa.map((x, i) => Math.abs(x - xb[i]!))) : null,
      };
    }
  const perJudge: Record<string, Json> = {};
  for (const j of judges) {
    const vs = scored.map(
      (it) =>
        (
          it.verdicts.judges as Record<
            string,
            { helm_ok?: boolean; valid_criteria?: number; call_failed?: boolean }
          >
        )[j]!,
    );
    perJudge[j] = {
      calls_failed: vs.filter((v) => v.call_failed).length,
      helm_parse_failures: vs.filter((v) => !v.call_failed && !v.helm_ok).length,
      medarc_no_valid_criterion: vs.filter((v) => !v.call_failed && v.valid_criteria === 0).length,
    };
  }
  const sources: Record<string, number> = {};
  for (const r of requests) {
    const s = String((r.meta as { source: string }).source);
    sources[s] = (sources[s] ?? 0) + 1;
  }
  return {
    items,
    metrics,
    paired: [],
    tables: {
      instances: requests.length,
      files_read: Number((requests[0]?.meta as { files_read?: number } | undefined)?.files_read ?? 0),
      reference_sources: sources,
      generation_failures: items.filter((it) => !it.verdicts.generated).length,
      parse_failures: items.filter((it) => !it.verdicts.api_error && !it.verdicts.generated).length,
      api_errors: items.filter((it) => it.verdicts.api_error).length,
      judges: perJudge,
      agreement,
    },
  };
}

/** The task's score (its `parts.score`). */
export const scoreTask: TaskModule["score"] = ({ requests, parsed, judged }) =>
  score(requests, parsed, judged);
