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

type JudgeVerdict = { score?: number; call_failed?: boolean; helm_ok?: boolean; valid_criteria?: number };

const mean = (xs: number[]) => (xs.length ? xs.reduce((sum, x) => sum + x, 0) / xs.length : NaN);

function pearson(left: number[], right: number[]): number | null {
  if (left.length < 2) return null;
  const leftMean = mean(left),
    rightMean = mean(right);
  let crossSum = 0,
    leftSquares = 0,
    rightSquares = 0;
  for (let i = 0; i < left.length; i++) {
    crossSum += (left[i]! - leftMean) * (right[i]! - rightMean);
    leftSquares += (left[i]! - leftMean) ** 2;
    rightSquares += (right[i]! - rightMean) ** 2;
  }
  return leftSquares === 0 || rightSquares === 0 ? null : crossSum / Math.sqrt(leftSquares * rightSquares);
}

/** Every judge's reading of one generated reply, and the instance's MedARC and HELM jury scores. */
function juryVerdicts(requestId: string, judged: JudgedReplies): Record<string, Json> {
  const perJudge: Record<string, Json> = {};
  const helmAll: number[] = [];
  const medarc: number[] = [];
  let medarcRaised = false;
  for (const judge of judged) {
    const text = judge.replies[requestId];
    if (text === undefined || text === null) {
      perJudge[judge.judge] = { call_failed: true };
      continue;
    } // left out, as MedARC does
    const helm = helmReading(text);
    const reading = medarcScore(text);
    if (helm.ok) helmAll.push(...helm.scores);
    medarc.push(reading.score);
    if (reading.crash) medarcRaised = true;
    perJudge[judge.judge] = {
      helm_scores: helm.ok ? helm.scores : null,
      helm_ok: helm.ok,
      score: reading.score,
      valid_criteria: reading.valid,
      // Where the reference code raises (docs/protocols/mtsamples.md): only then recorded.
      ...(!helm.ok && helm.crash ? { helm_raises: helm.crash } : {}),
      ...(reading.crash ? { medarc_raises: reading.crash } : {}),
    };
  }
  return {
    judges: perJudge,
    // MedARC: 0.0 when no judge answered, and when its reward function raised (verifiers scores it 0.0).
    score: medarc.length && !medarcRaised ? mean(medarc) : 0,
    helm_jury: helmAll.length ? mean(helmAll) : 1.0, // HELM: 1.0 when no judge succeeded
  };
}

function itemOf(request: TaskRequest, parsed: ParsedReply | null, judged: JudgedReplies): ItemVerdict {
  const meta = request.meta as { file: string; source: string };
  const verdicts: Record<string, Json> = {
    api_error: parsed === null,
    generated: parsed !== null && parsed.ok,
  };
  if (parsed && parsed.ok) Object.assign(verdicts, juryVerdicts(request.id, judged));
  return {
    id: request.id,
    meta: { subset: "all", group: request.id, file: meta.file, source: meta.source },
    parsed: parsed ? parsed.value : null,
    verdicts,
  };
}

const judgeVerdicts = (item: ItemVerdict) => item.verdicts.judges as Record<string, JudgeVerdict>;

function judgeScore(item: ItemVerdict, judge: string): number | null {
  const verdict = judgeVerdicts(item)[judge];
  return verdict && !verdict.call_failed ? (verdict.score ?? null) : null;
}

function metricRows(scored: ItemVerdict[], judges: string[]): MetricRows[] {
  const rows = (valueOf: (item: ItemVerdict) => number | null) =>
    scored.flatMap((item) => {
      const value = valueOf(item);
      return value === null ? [] : [{ id: item.id, value, cluster: item.id }];
    });
  return [
    {
      name: "judge_score",
      label:
        "judge score, normalised to [0, 1] (MedARC: mean over judges of the mean (s - 1) / 4 over criteria)",
      rows: rows((item) => item.verdicts.score as number),
      primary: true,
      ciFallback: "none",
    },
    {
      name: "helm_jury_score",
      label: "HELM jury score on the 1-5 scale (mean of int(score) over judges and criteria)",
      rows: rows((item) => item.verdicts.helm_jury as number),
      ciFallback: "none",
      unit: "score",
    },
    ...judges.map((judge) => ({
      name: `judge_score:${judge}`,
      label: `judge score of ${judge} alone, [0, 1]`,
      rows: rows((item) => judgeScore(item, judge)),
      ciFallback: "none" as const,
    })),
  ];
}

/** Each pair of judges over the instances both scored: Pearson's r and the mean absolute difference. */
function agreementTable(scored: ItemVerdict[], judges: string[]): Record<string, Json> {
  const agreement: Record<string, Json> = {};
  for (let i = 0; i < judges.length; i++)
    for (let other = i + 1; other < judges.length; other++) {
      const [first, second] = [judges[i]!, judges[other]!];
      const both = scored.filter(
        (item) => judgeScore(item, first) !== null && judgeScore(item, second) !== null,
      );
      const firstScores = both.map((item) => judgeScore(item, first)!),
        secondScores = both.map((item) => judgeScore(item, second)!);
      agreement[`${first} vs ${second}`] = {
        n: both.length,
        pearson_r: pearson(firstScores, secondScores),
        mean_abs_diff: both.length
          ? mean(firstScores.map((x, index) => Math.abs(x - secondScores[index]!)))
          : null,
      };
    }
  return agreement;
}

function judgeFailures(scored: ItemVerdict[], judges: string[]): Record<string, Json> {
  const perJudge: Record<string, Json> = {};
  for (const judge of judges) {
    const verdicts = scored.map((item) => judgeVerdicts(item)[judge]!);
    perJudge[judge] = {
      calls_failed: verdicts.filter((verdict) => verdict.call_failed).length,
      helm_parse_failures: verdicts.filter((verdict) => !verdict.call_failed && !verdict.helm_ok).length,
      medarc_no_valid_criterion: verdicts.filter(
        (verdict) => !verdict.call_failed && verdict.valid_criteria === 0,
      ).length,
    };
  }
  return perJudge;
}

function sourceCounts(requests: TaskRequest[]): Record<string, number> {
  const sources: Record<string, number> = {};
  for (const request of requests) {
    const source = String((request.meta as { source: string }).source);
    sources[source] = (sources[source] ?? 0) + 1;
  }
  return sources;
}

export function score(
  requests: TaskRequest[],
  parsed: (ParsedReply | null)[],
  judged: JudgedReplies = [],
): ScoreOutput {
  const judges = judged.map((judge) => judge.judge);
  const items = requests.map((request, i) => itemOf(request, parsed[i] ?? null, judged));
  const scored = items.filter((item) => item.verdicts.generated);
  return {
    items,
    metrics: metricRows(scored, judges),
    paired: [],
    tables: {
      instances: requests.length,
      files_read: Number((requests[0]?.meta as { files_read?: number } | undefined)?.files_read ?? 0),
      reference_sources: sourceCounts(requests),
      generation_failures: items.filter((item) => !item.verdicts.generated).length,
      parse_failures: items.filter((item) => !item.verdicts.api_error && !item.verdicts.generated).length,
      api_errors: items.filter((item) => item.verdicts.api_error).length,
      judges: judgeFailures(scored, judges),
      agreement: agreementTable(scored, judges),
    },
  };
}

/** The task's score (its `parts.score`). */
export const scoreTask: TaskModule["score"] = ({ requests, parsed, judged }) =>
  score(requests, parsed, judged);
