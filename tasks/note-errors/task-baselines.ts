// The built-in models of the task (route `medbench`).
import type { Baseline, BaselineInput, FitInput, TaskRequest } from "../task.js";
import type { Json } from "../../src/util/json.js";
import { readPairs, type Pair } from "./pairs.js";
import {
  conjunctionScores,
  conjunctionVerdict,
  constantYes,
  fitConjunction,
  prior,
  randomVerdicts,
  reply,
  type ConjunctionModel,
} from "./baselines.js";
import { TEST, TRAIN, metaOf } from "./files.js";

/** The note a request is about, from the release (a baseline reads the note, never the prompt around it). */
function notesOf(pairs: Pair[], requests: TaskRequest[]): { note: string; code: string }[] {
  const byId = new Map(pairs.map((pair) => [pair.pair_id, pair]));
  return requests.map((request) => {
    const meta = metaOf(request);
    const pair = byId.get(meta.pair_id)!;
    return { note: meta.side === "error" ? pair.error_note : pair.clean_note, code: pair.header_code };
  });
}

export const priorReply = ({ requests }: BaselineInput): string[] => prior(requests.length);
export const constantYesReply = ({ requests }: BaselineInput): string[] => constantYes(requests.length);

/** One draw per note of the whole test file (docs/protocols/note-errors.md): a partial run keeps its
 *  draws. */
export function randomReply({ release, requests, seed }: BaselineInput): string[] {
  const draws = randomVerdicts(readPairs(release.text(TEST), TEST), seed);
  return requests.map((request) => {
    const meta = metaOf(request);
    return reply(draws.get(`${meta.pair_id}/${meta.side}`)!, "random (p = 0.5)");
  });
}

export const conjunctionFit = ({ release, params }: FitInput): Json =>
  fitConjunction(
    readPairs(release.text(TRAIN), TRAIN),
    Number((params as { C?: number }).C ?? 10),
  ) as unknown as Json;

export function conjunctionReply({ release, requests, fitted }: BaselineInput): string[] {
  const model = fitted as unknown as ConjunctionModel;
  const scores = conjunctionScores(model, notesOf(readPairs(release.text(TEST), TEST), requests));
  return scores.map((score) => reply(conjunctionVerdict(model, score), "conjunction LR", score));
}

export const BASELINES: Record<string, Baseline> = {
  "medbench/prior": { reply: priorReply },
  "medbench/constant-yes": { reply: constantYesReply },
  "medbench/random": { reply: randomReply },
  "medbench/note-errors-conjunction-lr": {
    params: { C: { type: "number", exclusiveMinimum: 0, description: "inverse L2 strength (10)" } },
    fit: conjunctionFit,
    reply: conjunctionReply,
  },
};
