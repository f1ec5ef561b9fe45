// --shard I/N: one machine's deterministic share of a model stage's requests, by request key. Every machine
// computes the same keys, so the N shards together send each request exactly once.
export interface Shard {
  index: number; // 1-based
  count: number;
}

/** "I/N" with 1 <= I <= N, or null (the message says what is wrong). */
export function parseShard(text: string): Shard | string {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) return `--shard ${JSON.stringify(text)}: give it as I/N, e.g. --shard 2/4`;
  const index = Number(match[1]),
    count = Number(match[2]);
  if (count < 1 || index < 1 || index > count)
    return `--shard ${text}: I must be between 1 and N (N at least 1), e.g. --shard 1/${Math.max(count, 2)}`;
  return { index, count };
}

/** Whether this shard sends the request of this key (a sha256 in hex). */
export function ownsKey(shard: Shard, key: string): boolean {
  return parseInt(key.slice(0, 12), 16) % shard.count === shard.index - 1;
}
