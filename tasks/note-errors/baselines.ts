// Built-in models (route `medbench`): the document's four baselines. Each answers in the reply format the
// prompts ask for, so that it goes through the same parser as a model.
import { NumpyGenerator } from "../../src/stats/pcg64.js";
import { countMatrix, fitVocabulary, noteFeatures } from "./features.js";
import { decisionFunction, fitLogReg, median } from "./logreg.js";
import { itemId, noteOf, type Pair, type Side } from "./pairs.js";

export const reply = (verdict: "Yes" | "No", analysis: string, score?: number) =>
  `Evidence: \nAnalysis: ${analysis}\nConfidence: 0\n` +
  (score === undefined ? "" : `Score: ${score}\n`) +
  `Error: ${verdict}`;

/** medbench/prior: constant No (BCR 0 by construction). */
export const prior = (count: number) =>
  Array.from({ length: count }, () => reply("No", "constant No (prior)"));
/** medbench/constant-yes: constant Yes (BCR 0, F1 2/3 on balanced pairs). */
export const constantYes = (count: number) =>
  Array.from({ length: count }, () => reply("Yes", "constant Yes"));

/**
 * medbench/random: Yes with probability 0.5 on each note, numpy default_rng(0). Draw order: one random() per
 * note over the whole test file in file order, error note before twin (2 draws per pair); a note is Yes when
 * its draw is below 0.5. A partial run (--limit) reads the same draws for the pairs it keeps.
 */
export function randomVerdicts(pairs: Pair[], seed = 0): Map<string, "Yes" | "No"> {
  const rng = new NumpyGenerator(seed);
  const out = new Map<string, "Yes" | "No">();
  for (const pair of pairs)
    for (const side of ["error", "clean"] as Side[])
      out.set(itemId(pair, side), rng.random() < 0.5 ? "Yes" : "No");
  return out;
}

export interface ConjunctionModel {
  C: number;
  vocabulary: string[];
  coef: number[];
  intercept: number;
  threshold: number; // the median decision score over the train notes
  iterations: number;
  gradient: number;
}

/** Notes of a pairs file as documents: error note (label 1) then twin (label 0), pair by pair. */
export function documents(pairs: Pair[]): { docs: string[][]; labels: number[] } {
  const docs: string[][] = [],
    labels: number[] = [];
  for (const pair of pairs)
    for (const side of ["error", "clean"] as Side[]) {
      docs.push(noteFeatures(noteOf(pair, side), pair.header_code));
      labels.push(side === "error" ? 1 : 0);
    }
  return { docs, labels };
}

/**
 * The conjunction baseline fitted on the train pairs: word 1-2 grams + word × header code, L2 LR, C = 10.
 */
export function fitConjunction(train: Pair[], lossWeight = 10): ConjunctionModel {
  const { docs, labels } = documents(train);
  const vocabulary = fitVocabulary(docs);
  const matrix = countMatrix(docs, vocabulary);
  const model = fitLogReg(matrix, labels, lossWeight);
  return {
    C: lossWeight,
    vocabulary,
    coef: [...model.coef],
    intercept: model.intercept,
    threshold: median(decisionFunction(matrix, model)),
    iterations: model.iterations,
    gradient: model.gradientNorm,
  };
}

export function conjunctionScores(
  model: ConjunctionModel,
  notes: { note: string; code: string }[],
): number[] {
  const matrix = countMatrix(
    notes.map((entry) => noteFeatures(entry.note, entry.code)),
    model.vocabulary,
  );
  const scores = decisionFunction(matrix, {
    coef: Float64Array.from(model.coef),
    intercept: model.intercept,
    iterations: 0,
    gradientNorm: 0,
  });
  return [...scores];
}

/** Yes above the train median (strictly); a score equal to it is No. */
export const conjunctionVerdict = (model: ConjunctionModel, score: number): "Yes" | "No" =>
  score > model.threshold ? "Yes" : "No";
