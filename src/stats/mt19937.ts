// CPython's random.Random(seed) (MT19937 seeded by init_by_array), bit for bit (docs/reference/rng.md).

// MT19937's n (words of state) and m (the offset of the word each twist mixes in).
const STATE_WORDS = 624;
const SHIFT_WORDS = 397;

export class PyRandom {
  private readonly mt = new Uint32Array(STATE_WORDS);
  private mti = STATE_WORDS + 1;
  private gaussNext: number | null = null;

  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  seed(seed: number | bigint): void {
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key: number[] = [];
    do {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    } while (n > 0n);
    this.initByArray(key);
    this.gaussNext = null;
  }

  private initGenrand(seedWord: number): void {
    const mt = this.mt;
    mt[0] = seedWord >>> 0;
    for (let i = 1; i < STATE_WORDS; i++) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.mti = STATE_WORDS;
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1,
      j = 0;
    for (let k = Math.max(STATE_WORDS, key.length); k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= STATE_WORDS) {
        mt[0] = mt[STATE_WORDS - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = STATE_WORDS - 1; k > 0; k--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= STATE_WORDS) {
        mt[0] = mt[STATE_WORDS - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  genrandUint32(): number {
    const mt = this.mt;
    if (this.mti >= STATE_WORDS) {
      let kk = 0;
      for (; kk < STATE_WORDS - SHIFT_WORDS; kk++) {
        const y = (mt[kk]! & 0x80000000) | (mt[kk + 1]! & 0x7fffffff);
        mt[kk] = mt[kk + SHIFT_WORDS]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      for (; kk < STATE_WORDS - 1; kk++) {
        const y = (mt[kk]! & 0x80000000) | (mt[kk + 1]! & 0x7fffffff);
        mt[kk] = mt[kk + (SHIFT_WORDS - STATE_WORDS)]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      const y = (mt[STATE_WORDS - 1]! & 0x80000000) | (mt[0]! & 0x7fffffff);
      mt[STATE_WORDS - 1] = mt[SHIFT_WORDS - 1]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      this.mti = 0;
    }
    let y = mt[this.mti++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  random(): number {
    const high = this.genrandUint32() >>> 5;
    const low = this.genrandUint32() >>> 6;
    return (high * 67108864 + low) * (1 / 9007199254740992);
  }

  /** getrandbits(k) for k <= 53, as a number. */
  getrandbits(k: number): number {
    if (k <= 0) return 0;
    if (k <= 32) return this.genrandUint32() >>> (32 - k);
    if (k > 53) return Number(this.getrandbitsBig(k));
    const low = this.genrandUint32();
    const high = this.genrandUint32() >>> (64 - k);
    return high * 4294967296 + low;
  }

  /** getrandbits(k) for any k: 32-bit words, least significant first, the last one shifted. */
  getrandbitsBig(k: number): bigint {
    let out = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32) {
      let word = this.genrandUint32();
      if (left < 32) word >>>= 32 - left;
      out |= BigInt(word) << shift;
      shift += 32n;
    }
    return out;
  }

  /** _randbelow(n): k = n.bit_length(), rejection on getrandbits(k). */
  randbelow(n: number): number {
    const k = bitLength(n);
    let drawn = this.getrandbits(k);
    while (drawn >= n) drawn = this.getrandbits(k);
    return drawn;
  }

  randrange(start: number, stop?: number): number {
    if (stop === undefined) return this.randbelow(start);
    return start + this.randbelow(stop - start);
  }

  randint(low: number, high: number): number {
    return this.randrange(low, high + 1);
  }

  choice<T>(seq: readonly T[]): T {
    return seq[this.randbelow(seq.length)]!;
  }

  /** choices(population, k) without weights: floor(random() * n). */
  choicesIndex(
    n: number,
    k: number,
    out: Int32Array | number[] = new Array<number>(k),
  ): Int32Array | number[] {
    for (let i = 0; i < k; i++) out[i] = Math.floor(this.random() * n);
    return out;
  }

  choices<T>(population: readonly T[], k: number, weights?: readonly number[]): T[] {
    const n = population.length;
    if (!weights) return Array.from(this.choicesIndex(n, k), (i) => population[i]!);
    const cum: number[] = [];
    let acc = 0;
    for (const weight of weights) {
      acc += weight;
      cum.push(acc);
    }
    const total = acc + 0.0;
    const out: T[] = [];
    for (let i = 0; i < k; i++) out.push(population[bisectRight(cum, this.random() * total, 0, n - 1)]!);
    return out;
  }

  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const held = x[i]!;
      x[i] = x[j]!;
      x[j] = held;
    }
    return x;
  }

  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (k < 0 || k > n) throw new Error("sample larger than population or is negative");
    const result: T[] = new Array<T>(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j]!;
        pool[j] = pool[n - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j]!;
      }
    }
    return result;
  }

  uniform(low: number, high: number): number {
    return low + (high - low) * this.random();
  }

  /** Python's gauss(). Goes through log/cos/sin, whose last bit differs between V8 and glibc:
   *  reproducible only within a tolerance, never use it for a published statistic. */
  gauss(mu = 0, sigma = 1): number {
    let gaussian = this.gaussNext;
    this.gaussNext = null;
    if (gaussian === null) {
      const x2pi = this.random() * 2 * Math.PI;
      const g2rad = Math.sqrt(-2 * Math.log(1 - this.random()));
      gaussian = Math.cos(x2pi) * g2rad;
      this.gaussNext = Math.sin(x2pi) * g2rad;
    }
    return mu + gaussian * sigma;
  }
}

function bitLength(n: number): number {
  if (n < 4294967296) return n <= 0 ? 0 : 32 - Math.clz32(n);
  let k = 0;
  for (let rest = n; rest >= 1; rest = Math.floor(rest / 2)) k++;
  return k;
}

function bisectRight(sorted: number[], x: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x < sorted[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
