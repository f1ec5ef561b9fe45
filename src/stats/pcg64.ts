// numpy's default_rng(seed): SeedSequence -> PCG64 -> Generator, bit for bit (docs/reference/rng.md).
// The 128-bit state lives in eight 16-bit limbs held in doubles: every partial sum stays below 2^53,
// so the LCG step is exact without BigInt.

const MASK32 = 0xffffffff;
const TWO32 = 4294967296;
const TWO_M53 = 1 / 9007199254740992;

// 0x2360ED051FC65DA44385DF649FCCF645, least significant limb first.
const MULT = Float64Array.of(0xf645, 0x9fcc, 0xdf64, 0x4385, 0x5da4, 0x1fc6, 0xed05, 0x2360);

/** numpy SeedSequence(entropy).generate_state(4, uint64), as eight uint32 words (little-endian pairs). */
export function seedSequenceState(
  entropy: number | bigint,
  nWords32 = 8,
): { pool: number[]; state: number[] } {
  let e = BigInt(entropy);
  if (e < 0n) throw new Error("SeedSequence entropy must be non-negative");
  const words: number[] = [];
  do {
    words.push(Number(e & 0xffffffffn));
    e >>= 32n;
  } while (e > 0n);
  let hashConst = 0x43b0d7e5;
  const hashmix = (value: number): number => {
    value = (value ^ hashConst) >>> 0;
    hashConst = Math.imul(hashConst, 0x931e8875) >>> 0;
    value = Math.imul(value, hashConst) >>> 0;
    return (value ^ (value >>> 16)) >>> 0;
  };
  // numpy's SeedSequence mix(x, y).
  const mix = (current: number, hashed: number): number => {
    const mixed = (Math.imul(0xca01f9dd, current) - Math.imul(0x4973f715, hashed)) >>> 0;
    return (mixed ^ (mixed >>> 16)) >>> 0;
  };
  const pool = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) pool[i] = hashmix(i < words.length ? words[i]! : 0);
  for (let src = 0; src < 4; src++)
    for (let dst = 0; dst < 4; dst++) if (src !== dst) pool[dst] = mix(pool[dst]!, hashmix(pool[src]!));
  for (let src = 4; src < words.length; src++)
    for (let dst = 0; dst < 4; dst++) pool[dst] = mix(pool[dst]!, hashmix(words[src]!));
  let multiplier = 0x8b51f9dd;
  const state: number[] = [];
  for (let i = 0; i < nWords32; i++) {
    let word = (pool[i % 4]! ^ multiplier) >>> 0;
    multiplier = Math.imul(multiplier, 0x58f38ded) >>> 0;
    word = Math.imul(word, multiplier) >>> 0;
    state.push((word ^ (word >>> 16)) >>> 0);
  }
  return { pool, state };
}

export class PCG64 {
  private readonly s = new Float64Array(8); // state limbs
  private readonly inc = new Float64Array(8);
  private hasUint32 = false;
  private uinteger = 0;
  // The last next64, as two 32-bit halves.
  hi = 0;
  lo = 0;

  constructor(seed: number | bigint = 0) {
    const words = seedSequenceState(seed).state; // u64[k] = w[2k] | w[2k+1] << 32
    // initstate = u64[0] << 64 | u64[1]; initseq = u64[2] << 64 | u64[3]
    const initstate = limbs128(words[1]!, words[0]!, words[3]!, words[2]!);
    const initseq = limbs128(words[5]!, words[4]!, words[7]!, words[6]!);
    // inc = initseq << 1 | 1
    let carry = 0;
    for (let i = 0; i < 8; i++) {
      const doubled = initseq[i]! * 2 + carry;
      this.inc[i] = doubled & 0xffff;
      carry = doubled >>> 16;
    }
    this.inc[0] = this.inc[0]! | 1;
    this.step();
    let sumCarry = 0;
    for (let i = 0; i < 8; i++) {
      const sum = this.s[i]! + initstate[i]! + sumCarry;
      this.s[i] = sum % 65536;
      sumCarry = Math.floor(sum / 65536);
    }
    this.step();
  }

  /** The state as decimal strings (for checking against numpy's bit_generator.state). */
  stateDecimal(): { state: string; inc: string } {
    const dec = (limbList: Float64Array) =>
      limbList.reduceRight((acc, limb) => acc * 65536n + BigInt(limb), 0n).toString();
    return { state: dec(this.s), inc: dec(this.inc) };
  }

  private readonly out = new Float64Array(8); // the step's result, reused (a step allocates nothing)

  private step(): void {
    const state = this.s;
    const out = this.out;
    let carry = 0;
    for (let limb = 0; limb < 8; limb++) {
      let sum = carry + this.inc[limb]!;
      for (let i = 0; i <= limb; i++) sum += state[i]! * MULT[limb - i]!;
      carry = Math.floor(sum / 65536); // sum < 2^53: exact
      out[limb] = sum - carry * 65536;
    }
    state.set(out);
  }

  /** Advances and leaves the output in this.hi / this.lo. */
  next64(): void {
    this.step();
    const state = this.s;
    const xLo = ((state[1]! * 65536 + state[0]!) ^ (state[5]! * 65536 + state[4]!)) >>> 0;
    const xHi = ((state[3]! * 65536 + state[2]!) ^ (state[7]! * 65536 + state[6]!)) >>> 0;
    let rot = state[7]! >>> 10;
    let hi = xHi;
    let lo = xLo;
    if (rot >= 32) {
      const held = hi;
      hi = lo;
      lo = held;
      rot -= 32;
    }
    if (rot === 0) {
      this.hi = hi;
      this.lo = lo;
      return;
    }
    this.hi = ((hi >>> rot) | (lo << (32 - rot))) >>> 0;
    this.lo = ((lo >>> rot) | (hi << (32 - rot))) >>> 0;
  }

  next64BigInt(): bigint {
    this.next64();
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  next32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    this.next64();
    this.hasUint32 = true;
    this.uinteger = this.hi;
    return this.lo;
  }

  /** (next64 >> 11) * 2^-53 */
  nextDouble(): number {
    this.next64();
    return (this.hi * 2097152 + (this.lo >>> 11)) * TWO_M53;
  }
}

function limbs128(w3: number, w2: number, w1: number, w0: number): number[] {
  // w0 is the least significant 32-bit word
  return [w0 & 0xffff, w0 >>> 16, w1 & 0xffff, w1 >>> 16, w2 & 0xffff, w2 >>> 16, w3 & 0xffff, w3 >>> 16];
}

/** numpy.random.Generator over PCG64: the calls the task documents use. */
export class NumpyGenerator {
  readonly bitgen: PCG64;
  constructor(seed: number | bigint = 0) {
    this.bitgen = new PCG64(seed);
  }

  random(): number {
    return this.bitgen.nextDouble();
  }

  /** integers(lo, hi) with the default int64 dtype: Lemire's method, as numpy. */
  integer(lo: number, hi: number): number {
    const rng = hi - 1 - lo;
    if (rng < 0) throw new Error("integers: high must be above low");
    if (rng === 0) return lo;
    if (rng < MASK32) return lo + this.lemire32(rng + 1);
    if (rng === MASK32) return lo + this.bitgen.next32();
    return lo + Number(this.lemire64(BigInt(rng)));
  }

  /** integers(lo, hi, size) into out (a fresh array when omitted). */
  integers(
    lo: number,
    hi: number,
    size: number,
    out: Int32Array | number[] = new Array<number>(size),
  ): Int32Array | number[] {
    const rng = hi - 1 - lo;
    if (rng > 0 && rng < MASK32) {
      const excl = rng + 1;
      for (let i = 0; i < size; i++) out[i] = lo + this.lemire32(excl);
      return out;
    }
    for (let i = 0; i < size; i++) out[i] = this.integer(lo, hi);
    return out;
  }

  /** choice(n, size) with replacement and no p is integers(0, n, size). */
  choice(bound: number, size: number): number[] {
    return Array.from(this.integers(0, bound, size));
  }

  private lemire32(excl: number): number {
    // numpy's buffered_bounded_lemire_uint32: multiply a draw by excl, keep the high word, and draw again
    // while the low word falls below the threshold that would bias it.
    let { hi, leftover } = lemireProduct(this.bitgen.next32(), excl);
    if (leftover < excl) {
      const threshold = (TWO32 - excl) % excl;
      while (leftover < threshold) ({ hi, leftover } = lemireProduct(this.bitgen.next32(), excl));
    }
    return hi;
  }

  // Ranges of 2^32 and more are rare here; BigInt keeps this path simple.
  private lemire64(rng: bigint): bigint {
    const M64 = (1n << 64n) - 1n;
    if (rng === M64) return this.bitgen.next64BigInt();
    const excl = rng + 1n;
    let product = this.bitgen.next64BigInt() * excl;
    let leftover = product & M64;
    if (leftover < excl) {
      const threshold = (M64 - rng) % excl;
      while (leftover < threshold) {
        product = this.bitgen.next64BigInt() * excl;
        leftover = product & M64;
      }
    }
    return product >> 64n;
  }

  /** random_interval: masked rejection, as shuffle and permutation draw. */
  private interval(max: number): number {
    if (max === 0) return 0;
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let drawn: number;
    do {
      drawn = (this.bitgen.next32() & mask) >>> 0;
    } while (drawn > max);
    return drawn;
  }

  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const swapWith = this.interval(i);
      const held = x[i]!;
      x[i] = x[swapWith]!;
      x[swapWith] = held;
    }
    return x;
  }

  permutation(size: number): number[] {
    return this.shuffle(Array.from({ length: size }, (_slot, i) => i));
  }
}

/** floor(left * right / 2^32) for 32-bit left, right, exactly (ah, al: the high and low 16 bits of left). */
function mulHi32(left: number, right: number): number {
  const ah = left >>> 16,
    al = left & 0xffff;
  const highProduct = ah * right; // < 2^48
  const lowProduct = al * right; // < 2^48
  const Ah = Math.floor(highProduct / 65536),
    Al = highProduct - Ah * 65536;
  return Ah + Math.floor((Al * 65536 + lowProduct) / TWO32);
}

/** The high and low 32-bit words of random32 * excl (exact in a double when excl <= 2^21). */
function lemireProduct(random32: number, excl: number): { hi: number; leftover: number } {
  if (excl <= 2097152) {
    const product = random32 * excl;
    const hi = Math.floor(product / TWO32);
    return { hi, leftover: product - hi * TWO32 };
  }
  return { hi: mulHi32(random32, excl), leftover: Math.imul(random32, excl) >>> 0 };
}
