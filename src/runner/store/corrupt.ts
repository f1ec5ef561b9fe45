// A damaged cache object, as a reader finds it (the cache's reads, and a stage's streamed inputs). Its own
// module, so that a stage reading its inputs loads no cache code: the cache is not in any stage's key.
export class CorruptObjectError extends Error {
  constructor(
    readonly hash: string,
    readonly actual: string,
  ) {
    super(`cache object ${hash} is corrupted (its content hashes to ${actual})`);
  }
}
