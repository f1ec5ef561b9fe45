// Mean and sample SD of a metric over runs or configurations (the note-errors paper's primary).

/** Mean and sample SD (n - 1) of the defined values; SD null with fewer than two. */
export function meanSd(values: (number | null)[]): { mean: number | null; sd: number | null; n: number } {
  const xs = values.filter((x): x is number => x !== null);
  if (xs.length === 0) return { mean: null, sd: null, n: 0 };
  const mean = xs.reduce((sum, x) => sum + x, 0) / xs.length;
  if (xs.length < 2) return { mean, sd: null, n: xs.length };
  const ss = xs.reduce((sum, x) => sum + (x - mean) ** 2, 0);
  return { mean, sd: Math.sqrt(ss / (xs.length - 1)), n: xs.length };
}
