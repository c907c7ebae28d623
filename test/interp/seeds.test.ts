/**
 * Generated inputs (`@random[:SEED]`, runtime/random.ts seedFor) differ between inputs and between seeds: once the
 * seed was xor-ed into a name's first character, so x with seed 2 and y with seed 3 were the same data.
 */
import { describe, expect, it } from 'vitest';
import { seedFor } from '../../runtime/random.js';

describe('seedFor', () => {
  it('gives distinct seeds for distinct (name, seed) pairs over the names and seeds a program uses', () => {
    const names = ['x', 'y', 'z', 'A', 'B', 'X', 'W1', 'W2', 'r0', 'd0', 'Q', 'K', 'V', 'x0', 'y0'];
    const seen = new Map<number, string>();
    for (const name of names)
      for (let seed = 0; seed < 64; seed++) {
        const h = seedFor(seed, name);
        expect(seen.get(h), `${name}@${seed}`).toBeUndefined();
        seen.set(h, `${name}@${seed}`);
      }
    expect(seedFor(2, 'x')).not.toBe(seedFor(3, 'y'));
    // The same pair, the same seed: generated data is reproducible.
    expect(seedFor(7, 'X')).toBe(seedFor(7, 'X'));
  });
});
