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
    let magnitude = BigInt(seed);
    if (magnitude < 0n) magnitude = -magnitude;
    const key: number[] = [];
    do {
      key.push(Number(magnitude & 0xffffffffn));
      magnitude >>= 32n;
    } while (magnitude > 0n);
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
    // CPython's init_by_array names these i, j and k.
    let i = 1,
      keyIndex = 0;
    for (let steps = Math.max(STATE_WORDS, key.length); steps > 0; steps--) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      mt[i] = ((mt[i]! ^ Math.imul(prev, 1664525)) + key[keyIndex]! + keyIndex) >>> 0;
      i++;
      keyIndex++;
      if (i >= STATE_WORDS) {
        mt[0] = mt[STATE_WORDS - 1]!;
        i = 1;
      }
      if (keyIndex >= key.length) keyIndex = 0;
    }
    for (let steps = STATE_WORDS - 1; steps > 0; steps--) {
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
      let kk = 0; // CPython's genrand_uint32 calls `joined` and `tempered` y.
      for (; kk < STATE_WORDS - SHIFT_WORDS; kk++) {
        const joined = (mt[kk]! & 0x80000000) | (mt[kk + 1]! & 0x7fffffff);
        mt[kk] = mt[kk + SHIFT_WORDS]! ^ (joined >>> 1) ^ (joined & 1 ? 0x9908b0df : 0);
      }
      for (; kk < STATE_WORDS - 1; kk++) {
        const joined = (mt[kk]! & 0x80000000) | (mt[kk + 1]! & 0x7fffffff);
        mt[kk] = mt[kk + (SHIFT_WORDS - STATE_WORDS)]! ^ (joined >>> 1) ^ (joined & 1 ? 0x9908b0df : 0);
      }
      const joined = (mt[STATE_WORDS - 1]! & 0x80000000) | (mt[0]! & 0x7fffffff);
      mt[STATE_WORDS - 1] = mt[SHIFT_WORDS - 1]! ^ (joined >>> 1) ^ (joined & 1 ? 0x9908b0df : 0);
      this.mti = 0;
    }
    let tempered = mt[this.mti++]!;
    tempered ^= tempered >>> 11;
    tempered ^= (tempered << 7) & 0x9d2c5680;
    tempered ^= (tempered << 15) & 0xefc60000;
    tempered ^= tempered >>> 18;
    return tempered >>> 0;
  }

  random(): number {
    const high = this.genrandUint32() >>> 5;
    const low = this.genrandUint32() >>> 6;
    return (high * 67108864 + low) * (1 / 9007199254740992);
  }

  /** getrandbits(k) for k <= 53, as a number. */
  getrandbits(bits: number): number {
    if (bits <= 0) return 0;
    if (bits <= 32) return this.genrandUint32() >>> (32 - bits);
    if (bits > 53) return Number(this.getrandbitsBig(bits));
    const low = this.genrandUint32();
    const high = this.genrandUint32() >>> (64 - bits);
    return high * 4294967296 + low;
  }

  /** getrandbits(k) for any k: 32-bit words, least significant first, the last one shifted. */
  getrandbitsBig(bits: number): bigint {
    let out = 0n;
    let shift = 0n;
    for (let left = bits; left > 0; left -= 32) {
      let word = this.genrandUint32();
      if (left < 32) word >>>= 32 - left;
      out |= BigInt(word) << shift;
      shift += 32n;
    }
    return out;
  }

  /** _randbelow(n): k = n.bit_length(), rejection on getrandbits(k). */
  randbelow(bound: number): number {
    const bits = bitLength(bound);
    let drawn = this.getrandbits(bits);
    while (drawn >= bound) drawn = this.getrandbits(bits);
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

  /** choices(population, k) without weights: floor(random() * n) (n: populationSize, k: count). */
  choicesIndex(
    populationSize: number,
    count: number,
    out: Int32Array | number[] = new Array<number>(count),
  ): Int32Array | number[] {
    for (let i = 0; i < count; i++) out[i] = Math.floor(this.random() * populationSize);
    return out;
  }

  choices<T>(population: readonly T[], count: number, weights?: readonly number[]): T[] {
    const populationSize = population.length;
    if (!weights) return Array.from(this.choicesIndex(populationSize, count), (i) => population[i]!);
    const cum: number[] = [];
    let acc = 0;
    for (const weight of weights) {
      acc += weight;
      cum.push(acc);
    }
    const total = acc + 0.0;
    const out: T[] = [];
    for (let i = 0; i < count; i++)
      out.push(population[bisectRight(cum, this.random() * total, 0, populationSize - 1)]!);
    return out;
  }

  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const swapWith = this.randbelow(i + 1);
      const held = x[i]!;
      x[i] = x[swapWith]!;
      x[swapWith] = held;
    }
    return x;
  }

  sample<T>(population: readonly T[], count: number): T[] {
    const populationSize = population.length;
    if (count < 0 || count > populationSize) throw new Error("sample larger than population or is negative");
    const result: T[] = new Array<T>(count);
    let setsize = 21;
    if (count > 5) setsize += 4 ** Math.ceil(Math.log(count * 3) / Math.log(4));
    if (populationSize <= setsize) {
      const pool = [...population];
      for (let i = 0; i < count; i++) {
        const picked = this.randbelow(populationSize - i);
        result[i] = pool[picked]!;
        pool[picked] = pool[populationSize - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < count; i++) {
        let picked = this.randbelow(populationSize);
        while (selected.has(picked)) picked = this.randbelow(populationSize);
        selected.add(picked);
        result[i] = population[picked]!;
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

function bitLength(value: number): number {
  if (value < 4294967296) return value <= 0 ? 0 : 32 - Math.clz32(value);
  let bits = 0;
  for (let rest = value; rest >= 1; rest = Math.floor(rest / 2)) bits++;
  return bits;
}

function bisectRight(sorted: number[], x: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x < sorted[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
