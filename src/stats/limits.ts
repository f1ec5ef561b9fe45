// The bounds of the interval procedures (docs/statistics.md, "What `medbench stats` accepts"): work a user
// can ask for stays finite.
// specs/spec.schema.json states the same maximum for a spec's `resamples`.

/** Resamples of one bootstrap: 50 times the tasks' 2,000. 100,000 resamples of 219 clusters took 4 to 6 s on
 *  a loaded 2-core machine (a million took 36 s); the work grows with resamples times clusters. */
export const MAX_RESAMPLES = 100_000;

/** The size of one `stats` input file: JSONL of a few hundred thousand rows, far below what Node can
 *  read. */
export const MAX_INPUT_BYTES = 256 * 1024 * 1024;
