// numpy's default_rng(seed): SeedSequence -> PCG64 -> Generator, bit for bit (docs/reference/rng.md).
// The 128-bit state lives in eight 16-bit limbs held in doubles: every partial sum stays below 2^53,
// so the LCG step is exact without BigInt.

const MASK32 = 0xffffffff;
const TWO32 = 4294967296;
const TWO_M32 = 1 / TWO32;
/** The largest range whose products with a 32-bit draw are exact in a double (2^21). */
const LEMIRE_EXACT = 2097152;
const TWO_M53 = 1 / 9007199254740992;

// The LCG's multiplier, 0x2360ED051FC65DA44385DF649FCCF645, is written into step() limb by limb:
// 0xf645, 0x9fcc, 0xdf64, 0x4385, 0x5da4, 0x1fc6, 0xed05, 0x2360 (least significant first).

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

  // The LCG step, state * multiplier + inc mod 2^128, written out: each 16-bit column's products summed
  // apart (below 2^35), then the columns joined in pairs and carried 32 bits at a time (each sum below
  // 2^52): four dependent carries, where a carry per limb made a chain of eight divisions that took most
  // of a bootstrap's draws (docs/performance.md, "The bootstrap's draws"). Exact in doubles throughout.
  private step(): void {
    const state = this.s;
    const inc = this.inc;
    const s0 = state[0]!,
      s1 = state[1]!,
      s2 = state[2]!,
      s3 = state[3]!,
      s4 = state[4]!,
      s5 = state[5]!,
      s6 = state[6]!,
      s7 = state[7]!;
    const col0 = inc[0]! + s0 * 0xf645;
    const col1 = inc[1]! + s0 * 0x9fcc + s1 * 0xf645;
    const col2 = inc[2]! + s0 * 0xdf64 + s1 * 0x9fcc + s2 * 0xf645;
    const col3 = inc[3]! + s0 * 0x4385 + s1 * 0xdf64 + s2 * 0x9fcc + s3 * 0xf645;
    const col4 = inc[4]! + s0 * 0x5da4 + s1 * 0x4385 + s2 * 0xdf64 + s3 * 0x9fcc + s4 * 0xf645;
    const col5 = inc[5]! + s0 * 0x1fc6 + s1 * 0x5da4 + s2 * 0x4385 + s3 * 0xdf64 + s4 * 0x9fcc + s5 * 0xf645;
    const col6 =
      inc[6]! +
      s0 * 0xed05 +
      s1 * 0x1fc6 +
      s2 * 0x5da4 +
      s3 * 0x4385 +
      s4 * 0xdf64 +
      s5 * 0x9fcc +
      s6 * 0xf645;
    const col7 =
      inc[7]! +
      (s0 * 0x2360 + s1 * 0xed05 + s2 * 0x1fc6 + s3 * 0x5da4) +
      (s4 * 0x4385 + s5 * 0xdf64 + s6 * 0x9fcc + s7 * 0xf645);
    let sum = col0 + col1 * 65536;
    let carry = Math.floor(sum * TWO_M32);
    this.w0 = sum - carry * TWO32;
    sum = carry + col2 + col3 * 65536;
    carry = Math.floor(sum * TWO_M32);
    this.w1 = sum - carry * TWO32;
    sum = carry + col4 + col5 * 65536;
    carry = Math.floor(sum * TWO_M32);
    this.w2 = sum - carry * TWO32;
    sum = carry + col6 + col7 * 65536;
    this.w3 = sum - Math.floor(sum * TWO_M32) * TWO32;
    state[0] = this.w0 & 0xffff;
    state[1] = this.w0 >>> 16;
    state[2] = this.w1 & 0xffff;
    state[3] = this.w1 >>> 16;
    state[4] = this.w2 & 0xffff;
    state[5] = this.w2 >>> 16;
    state[6] = this.w3 & 0xffff;
    state[7] = this.w3 >>> 16;
  }

  // The state after the last step as four 32-bit words, least significant first.
  private w0 = 0;
  private w1 = 0;
  private w2 = 0;
  private w3 = 0;

  /** Advances and leaves the output in this.hi / this.lo. */
  next64(): void {
    this.step();
    const xLo = (this.w0 ^ this.w2) >>> 0;
    const xHi = (this.w1 ^ this.w3) >>> 0;
    let rot = this.w3 >>> 26;
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

  /** numpy's buffered_bounded_lemire_uint32 `size` times, out[i] = lo + a draw below `excl` (at most 2^21:
   *  each product is then exact in a double). One loop over next32's draws: the calls a draw made through
   *  the generator (integers, lemire32, next32) took more of a bootstrap's draws than the draws did. */
  fillBounded(excl: number, lo: number, size: number, out: Int32Array | number[]): void {
    const threshold = (TWO32 - excl) % excl; // a low word below it would bias the draw: drawn again
    let has = this.hasUint32;
    let held = this.uinteger;
    for (let i = 0; i < size; i++) {
      let high: number;
      let low: number;
      do {
        let random = held;
        if (has) has = false;
        else {
          this.next64();
          has = true;
          held = this.hi;
          random = this.lo;
        }
        const product = random * excl;
        high = Math.floor(product * TWO_M32);
        low = product - high * TWO32;
      } while (low < threshold);
      out[i] = lo + high;
    }
    this.hasUint32 = has;
    this.uinteger = held;
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
      if (excl <= LEMIRE_EXACT) this.bitgen.fillBounded(excl, lo, size, out);
      else for (let i = 0; i < size; i++) out[i] = lo + this.lemire32(excl);
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
    let hi = lemireHigh(this.bitgen.next32(), excl);
    if (lowWord < excl) {
      const threshold = (TWO32 - excl) % excl;
      while (lowWord < threshold) hi = lemireHigh(this.bitgen.next32(), excl);
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

/** The low word of the last product lemireHigh made (a variable, not an object returned with the high word:
 *  nothing allocated per draw, even before V8 optimises the loop). */
let lowWord = 0;

/** The high 32-bit word of random32 * excl, its low word left in lowWord (exact in a double when
 *  excl <= 2^21). */
function lemireHigh(random32: number, excl: number): number {
  if (excl <= LEMIRE_EXACT) {
    const product = random32 * excl;
    const hi = Math.floor(product * TWO_M32);
    lowWord = product - hi * TWO32;
    return hi;
  }
  lowWord = Math.imul(random32, excl) >>> 0;
  return mulHi32(random32, excl);
}
