/**
 * runtime/io/order.ts sortEntries against a plain stable sort, over entry
 * orders that take each of its paths: already in order, by (minor, major)
 * and expanded symmetric storage (one counting sort), random (two), and a
 * minor dimension far wider than the entries (by comparison).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortEntries } from '../../runtime/io/order.js';

interface Case {
  major: Int32Array;
  minor: Int32Array;
  nMajor: number;
  nMinor: number;
}

/** Entry indices sorted by (major, minor), ties by index. */
function reference({ major, minor }: Case): number[] {
  return [...major.keys()].sort((a, b) => major[a]! - major[b]! || minor[a]! - minor[b]! || a - b);
}

function check(c: Case): void {
  const want = reference(c);
  const got = sortEntries(c.major, c.nMajor, c.minor, c.nMinor);
  expect(got.perm ? [...got.perm] : want.map((_, k) => k)).toEqual(want);
  expect([...got.minorSorted]).toEqual(want.map((e) => c.minor[e]!));
  const ptr = new Array<number>(c.nMajor + 1).fill(0);
  for (const m of c.major) ptr[m + 1]!++;
  for (let k = 0; k < c.nMajor; k++) ptr[k + 1]! += ptr[k]!;
  expect([...got.ptr]).toEqual(ptr);
}

type Order = 'random' | 'row-major' | 'col-major' | 'symmetric';

const caseArb = fc
  .record({
    nMajor: fc.integer({ min: 1, max: 40 }),
    nMinor: fc.integer({ min: 1, max: 300 }),
    n: fc.integer({ min: 0, max: 400 }),
    hot: fc.integer({ min: 0, max: 100 }),
    order: fc.constantFrom<Order>('random', 'row-major', 'col-major', 'symmetric'),
    seed: fc.integer(),
  })
  .map(({ nMajor, nMinor, n, hot, order, seed }): Case => {
    let x = seed >>> 0 || 1;
    const next = (m: number): number => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % m;
    };
    // `hot` percent of the entries land in major index 0, so some groups are long and repeated positions occur.
    let pairs = Array.from({ length: n }, () => [next(100) < hot ? 0 : next(nMajor), next(nMinor)] as [number, number]);
    if (order === 'symmetric') {
      const k = Math.min(nMajor, nMinor);
      const lower = pairs.map(([a, b]) => [a % k, b % k] as [number, number]).filter(([a, b]) => a >= b);
      lower.sort((p, q) => p[1] - q[1] || p[0] - q[0]);
      pairs = lower.flatMap(
        ([a, b]) =>
          (a === b
            ? [[a, b]]
            : [
                [a, b],
                [b, a],
              ]) as [number, number][],
      );
    } else if (order === 'row-major') pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
    else if (order === 'col-major') pairs.sort((p, q) => p[1] - q[1] || p[0] - q[0]);
    return {
      major: Int32Array.from(pairs, (p) => p[0]),
      minor: Int32Array.from(pairs, (p) => p[1]),
      nMajor,
      nMinor,
    };
  });

describe('sortEntries', () => {
  it('equals a stable sort by (major, minor) in every entry order', () => {
    fc.assert(fc.property(caseArb, check), { numRuns: 400, seed: 7 });
  });

  it('keeps repeated positions in input order', () => {
    const minor = Int32Array.from({ length: 100 }, (_, i) => (i * 37) % 10);
    check({ major: new Int32Array(100), minor, nMajor: 1, nMinor: 10 });
    check({ major: new Int32Array(0), minor: new Int32Array(0), nMajor: 3, nMinor: 3 });
  });

  it('sorts a minor dimension far wider than the entries by comparison, in O(nnz) memory', () => {
    fc.assert(
      fc.property(caseArb, (c) => check({ ...c, minor: c.minor.map((m) => m * 7_000_000), nMinor: 2 ** 31 - 1 })),
      { numRuns: 100, seed: 13 },
    );
  });
});
