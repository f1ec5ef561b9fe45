// L2-regularised logistic regression with an unpenalised intercept, scikit-learn's objective
//   f(w, b) = ½‖w‖² + C Σᵢ log(1 + exp(−yᵢ (xᵢ·w + b))),
// solved to convergence by Newton's method with conjugate-gradient steps on Hessian-vector products (the
// matrix stays sparse) and a backtracking line search. The optimum is unique, so any solver run to
// convergence gives the same coefficients; scikit-learn's lbfgs stops at tol 1e-4 by default, so the fixture
// that checks this file runs it with a tight tolerance (scripts/reference/note_errors_lr.py).
// The code spells w, b and C as weights, bias and lossWeight; the order of every float operation is the
// reference's, so that results stay bit-exact.
import type { Sparse } from "./features.js";

export interface LogReg {
  coef: Float64Array;
  intercept: number;
  iterations: number;
  gradientNorm: number; // the largest |∂f| at the solution
}

/** The training data and scikit-learn's C, the weight of the loss against the penalty. */
interface Problem {
  features: Sparse;
  labels: ArrayLike<number>; // 0 or 1
  lossWeight: number;
}

/** A point (or a direction) in the space of coefficients: one weight per feature and the intercept. */
interface Point {
  weights: Float64Array;
  bias: number;
}

interface Gradient extends Point {
  norm: number; // the largest absolute component
  curvature: Float64Array; // the Hessian's weight for each row
}

interface Iterate extends Point {
  value: number; // the objective at the point
}

// `entry` walks a CSR row's stored values (the usual k), `column` a feature (the usual j).
function matvec(features: Sparse, weights: Float64Array, bias: number, out: Float64Array): void {
  const { indptr, indices, data } = features;
  for (let row = 0; row < features.rows; row++) {
    let sum = bias;
    for (let entry = indptr[row]!; entry < indptr[row + 1]!; entry++)
      sum += data[entry]! * weights[indices[entry]!]!;
    out[row] = sum;
  }
}

/** log(1 + exp(z)) without overflow. */
const softplus = (margin: number) =>
  margin > 0 ? margin + Math.log1p(Math.exp(-margin)) : Math.log1p(Math.exp(margin));
const sigmoid = (margin: number) =>
  margin >= 0 ? 1 / (1 + Math.exp(-margin)) : Math.exp(margin) / (1 + Math.exp(margin));

const dot = (left: Point, right: Point) => {
  let sum = left.bias * right.bias;
  for (let column = 0; column < left.weights.length; column++)
    sum += left.weights[column]! * right.weights[column]!;
  return sum;
};

/** f at the point; leaves X w + b in margins. */
function objective(problem: Problem, weights: Float64Array, bias: number, margins: Float64Array): number {
  const { features, labels, lossWeight } = problem;
  matvec(features, weights, bias, margins);
  let value = 0;
  for (let column = 0; column < features.cols; column++) value += 0.5 * weights[column]! * weights[column]!;
  for (let i = 0; i < features.rows; i++)
    value += lossWeight * (softplus(margins[i]!) - labels[i]! * margins[i]!);
  return value;
}

/** The gradient and the Hessian's row weights at the point. */
function gradientAt(problem: Problem, point: Point, margins: Float64Array): Gradient {
  const { features, labels, lossWeight } = problem;
  const { indptr, indices, data } = features;
  matvec(features, point.weights, point.bias, margins);
  const weights = new Float64Array(features.cols);
  const curvature = new Float64Array(features.rows);
  const residuals = new Float64Array(features.rows);
  let bias = 0;
  for (let i = 0; i < features.rows; i++) {
    const probability = sigmoid(margins[i]!);
    residuals[i] = lossWeight * (probability - labels[i]!);
    curvature[i] = lossWeight * probability * (1 - probability);
    bias += residuals[i]!;
  }
  for (let i = 0; i < features.rows; i++)
    for (let entry = indptr[i]!; entry < indptr[i + 1]!; entry++)
      weights[indices[entry]!]! += data[entry]! * residuals[i]!;
  let norm = Math.abs(bias);
  for (let column = 0; column < features.cols; column++) {
    weights[column] = weights[column]! + point.weights[column]!;
    norm = Math.max(norm, Math.abs(weights[column]!));
  }
  return { weights, bias, norm, curvature };
}

/** H v = v_w (no penalty on b) + Xᵀ D X v. */
function hessianTimes(features: Sparse, curvature: Float64Array, vector: Point): Point {
  const { indptr, indices, data } = features;
  const margins = new Float64Array(features.rows);
  matvec(features, vector.weights, vector.bias, margins);
  const weights = Float64Array.from(vector.weights);
  let bias = 0;
  for (let i = 0; i < features.rows; i++) {
    const scaled = curvature[i]! * margins[i]!;
    bias += scaled;
    for (let entry = indptr[i]!; entry < indptr[i + 1]!; entry++)
      weights[indices[entry]!]! += data[entry]! * scaled;
  }
  return { weights, bias };
}

/** Solves H step = −gradient by conjugate gradients. */
function newtonStep(features: Sparse, gradient: Gradient): Point {
  const cols = features.cols;
  const step: Point = { weights: new Float64Array(cols), bias: 0 };
  const residual: Point = {
    weights: Float64Array.from(gradient.weights, (component) => -component),
    bias: -gradient.bias,
  };
  const direction: Point = { weights: Float64Array.from(residual.weights), bias: residual.bias };
  let residualSquare = dot(residual, residual);
  const initialNorm = Math.sqrt(residualSquare);
  const tolerance = Math.min(0.5, Math.sqrt(initialNorm)) * initialNorm * 1e-3;
  for (
    let iteration = 0;
    iteration < 10 * (cols + 1) && Math.sqrt(residualSquare) > tolerance;
    iteration++
  ) {
    const product = hessianTimes(features, gradient.curvature, direction);
    const alpha = residualSquare / dot(direction, product);
    for (let column = 0; column < cols; column++) {
      step.weights[column] = step.weights[column]! + alpha * direction.weights[column]!;
      residual.weights[column] = residual.weights[column]! - alpha * product.weights[column]!;
    }
    step.bias += alpha * direction.bias;
    residual.bias -= alpha * product.bias;
    const nextSquare = dot(residual, residual);
    const beta = nextSquare / residualSquare;
    residualSquare = nextSquare;
    for (let column = 0; column < cols; column++)
      direction.weights[column] = residual.weights[column]! + beta * direction.weights[column]!;
    direction.bias = residual.bias + beta * direction.bias;
  }
  return step;
}

/** Backtracking line search (Armijo) along the step, at most 60 halvings. */
function lineSearch(
  problem: Problem,
  current: Iterate,
  gradient: Gradient,
  step: Point,
  margins: Float64Array,
): Iterate {
  const slope = dot(gradient, step);
  let length = 1;
  for (let tries = 0; ; tries++, length /= 2) {
    const weights = Float64Array.from(current.weights, (x, column) => x + length * step.weights[column]!);
    const value = objective(problem, weights, current.bias + length * step.bias, margins);
    if (value <= current.value + 1e-4 * length * slope || tries === 59)
      return { weights, bias: current.bias + length * step.bias, value };
  }
}

export function fitLogReg(
  features: Sparse,
  labels: ArrayLike<number>, // 0 or 1
  lossWeight: number,
  opts: { tol?: number; maxIter?: number } = {},
): LogReg {
  const tol = opts.tol ?? 1e-10;
  const maxIter = opts.maxIter ?? 100;
  const problem: Problem = { features, labels, lossWeight };
  const margins = new Float64Array(features.rows);
  const start = new Float64Array(features.cols);
  let current: Iterate = { weights: start, bias: 0, value: objective(problem, start, 0, margins) };
  let iterations = 0,
    gradientNorm = Infinity;
  for (; iterations < maxIter; iterations++) {
    const gradient = gradientAt(problem, current, margins);
    gradientNorm = gradient.norm;
    if (gradientNorm <= tol * Math.max(1, lossWeight)) break;
    const step = newtonStep(features, gradient);
    current = lineSearch(problem, current, gradient, step, margins);
  }
  return { coef: current.weights, intercept: current.bias, iterations, gradientNorm };
}

export function decisionFunction(features: Sparse, model: LogReg): Float64Array {
  const out = new Float64Array(features.rows);
  matvec(features, model.coef, model.intercept, out);
  return out;
}

/** numpy.median: the middle value, or the mean of the two middle values. */
export function median(xs: ArrayLike<number>): number {
  const sorted = Float64Array.from(xs).sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
