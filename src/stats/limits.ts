// The bounds of the interval procedures (docs/statistics.md, "Limits"): work a user can ask for stays finite.
// specs/spec.schema.json states the same maximum for a spec's `resamples`.

/** Resamples of one bootstrap: a million is 1,000 times the tasks' 1,000 and 2,000, and takes seconds. */
export const MAX_RESAMPLES = 1_000_000;

/** The size of one `stats` input file: JSONL of a few hundred thousand rows, far below what Node can read. */
export const MAX_INPUT_BYTES = 256 * 1024 * 1024;
