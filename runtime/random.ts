/**
 * A small deterministic generator (SplitMix32 style) so that generated inputs
 * and tests are identical on every machine and Node version.
 */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** Next 32-bit unsigned integer. */
  u32(): number {
    this.s = (this.s + 0x9e3779b9) >>> 0;
    let z = this.s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/**
 * A seed mixing a user seed with a name, so each generated input differs: the name hashed (FNV-1a), then the seed
 * mixed in and the bits spread (murmur3's finaliser). For one name, distinct seeds give distinct results (every
 * step is a bijection of 32 bits). The seed once went in first, xor-ed into the name's first character, so x with
 * seed 2 and y with seed 3 (x ^ 2 = y ^ 3) were the same data.
 */
export function seedFor(seed: number, name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (seed >>> 0), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
