// L2-regularised logistic regression with an unpenalised intercept, scikit-learn's objective
//   f(w, b) = ½‖w‖² + C Σᵢ log(1 + exp(−yᵢ (xᵢ·w + b))),
// solved to convergence by Newton's method with conjugate-gradient steps on Hessian-vector products (the
// matrix stays sparse) and a backtracking line search. The optimum is unique, so any solver run to
// convergence gives the same coefficients; scikit-learn's lbfgs stops at tol 1e-4 by default, so the fixture
// that checks this file runs it with a tight tolerance (scripts/reference/note_errors_lr.py).
import type { Sparse } from "./features.js";

export interface LogReg {
  coef: Float64Array;
  intercept: number;
  iterations: number;
  gradientNorm: number; // the largest |∂f| at the solution
}

function matvec(X: Sparse, w: Float64Array, b: number, out: Float64Array): void {
  for (let r = 0; r < X.rows; r++) {
    let s = b;
    for (let k = X.indptr[r]!; k < X.indptr[r + 1]!; k++) s += X.data[k]! * w[X.indices[k]!]!;
    out[r] = s;
  }
}

/** log(1 + exp(z)) without overflow. */
const softplus = (z: number) => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)));
const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

export function fitLogReg(
  X: Sparse,
  y: ArrayLike<number>, // 0 or 1
  C: number,
  opts: { tol?: number; maxIter?: number } = {},
): LogReg {
  const tol = opts.tol ?? 1e-10;
  const maxIter = opts.maxIter ?? 100;
  const n = X.rows,
    d = X.cols;
  let w = new Float64Array(d);
  let b = 0;
  const z = new Float64Array(n);
  const objective = (w: Float64Array, b: number): number => {
    matvec(X, w, b, z);
    let f = 0;
    for (let j = 0; j < d; j++) f += 0.5 * w[j]! * w[j]!;
    for (let i = 0; i < n; i++) f += C * (softplus(z[i]!) - y[i]! * z[i]!);
    return f;
  };
  let f = objective(w, b);
  const gw = new Float64Array(d);
  const D = new Float64Array(n);
  const r = new Float64Array(n);
  let iterations = 0,
    gnorm = Infinity;
  for (; iterations < maxIter; iterations++) {
    // gradient and Hessian weights at (w, b); z holds X w + b from the last objective call
    matvec(X, w, b, z);
    gw.fill(0);
    let gb = 0;
    for (let i = 0; i < n; i++) {
      const p = sigmoid(z[i]!);
      r[i] = C * (p - y[i]!);
      D[i] = C * p * (1 - p);
      gb += r[i]!;
    }
    for (let i = 0; i < n; i++)
      for (let k = X.indptr[i]!; k < X.indptr[i + 1]!; k++) gw[X.indices[k]!]! += X.data[k]! * r[i]!;
    gnorm = Math.abs(gb);
    for (let j = 0; j < d; j++) {
      gw[j] = gw[j]! + w[j]!;
      gnorm = Math.max(gnorm, Math.abs(gw[j]!));
    }
    if (gnorm <= tol * Math.max(1, C)) break;
    // Solve H [dw; db] = −[gw; gb] by conjugate gradients, H v = v_w (no penalty on b) + Xᵀ D X v.
    const Hv = (vw: Float64Array, vb: number): [Float64Array, number] => {
      const t = new Float64Array(n);
      matvec(X, vw, vb, t);
      const ow = Float64Array.from(vw);
      let ob = 0;
      for (let i = 0; i < n; i++) {
        const s = D[i]! * t[i]!;
        ob += s;
        for (let k = X.indptr[i]!; k < X.indptr[i + 1]!; k++) ow[X.indices[k]!]! += X.data[k]! * s;
      }
      return [ow, ob];
    };
    const dw = new Float64Array(d);
    let db = 0;
    const rw = Float64Array.from(gw, (g) => -g);
    let rb = -gb;
    const pw = Float64Array.from(rw);
    let pb = rb;
    const dot = (aw: Float64Array, ab: number, cw: Float64Array, cb: number) => {
      let s = ab * cb;
      for (let j = 0; j < d; j++) s += aw[j]! * cw[j]!;
      return s;
    };
    let rr = dot(rw, rb, rw, rb);
    const r0 = Math.sqrt(rr);
    for (let k = 0; k < 10 * (d + 1) && Math.sqrt(rr) > Math.min(0.5, Math.sqrt(r0)) * r0 * 1e-3; k++) {
      const [qw, qb] = Hv(pw, pb);
      const alpha = rr / dot(pw, pb, qw, qb);
      for (let j = 0; j < d; j++) {
        dw[j] = dw[j]! + alpha * pw[j]!;
        rw[j] = rw[j]! - alpha * qw[j]!;
      }
      db += alpha * pb;
      rb -= alpha * qb;
      const rr2 = dot(rw, rb, rw, rb);
      const beta = rr2 / rr;
      rr = rr2;
      for (let j = 0; j < d; j++) pw[j] = rw[j]! + beta * pw[j]!;
      pb = rb + beta * pb;
    }
    // backtracking line search (Armijo)
    const slope = dot(gw, gb, dw, db);
    let step = 1;
    for (let tries = 0; tries < 60; tries++, step /= 2) {
      const nw = Float64Array.from(w, (x, j) => x + step * dw[j]!);
      const nf = objective(nw, b + step * db);
      if (nf <= f + 1e-4 * step * slope || tries === 59) {
        w = nw;
        b += step * db;
        f = nf;
        break;
      }
    }
  }
  return { coef: w, intercept: b, iterations, gradientNorm: gnorm };
}

export function decisionFunction(X: Sparse, m: LogReg): Float64Array {
  const out = new Float64Array(X.rows);
  matvec(X, m.coef, m.intercept, out);
  return out;
}

/** numpy.median: the middle value, or the mean of the two middle values. */
export function median(xs: ArrayLike<number>): number {
  const s = Float64Array.from(xs).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
