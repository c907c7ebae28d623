/**
 * What the sampled row statistics (runtime/features/sampled-rows.ts) must
 * hold on any pattern, checked on generated ones (fast-check): row lengths
 * from mixtures of short rows, empty rows, heavy tails and hub rows in
 * runs, numbered in drawn order or sorted. Every statistic finite and in
 * its range; rowLenMax the length of a row of the pattern, at least the
 * longest row of the sampled blocks and at most the longest row; the same
 * figures for the same seed; and on a pattern whose sampled blocks are
 * all hub rows (more than the 32 a sample takes as themselves) the same
 * bounds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quickBlocks, QUICK_BLOCK_ROWS, sampledRowStats } from '../../runtime/features/quick.js';
import { blockStart } from '../../runtime/features/sample-blocks.js';
import { rowLengthStats } from '../../runtime/features/tier1.js';
import { lengthsPattern } from '../../bench/power-law-rows.js';
import type { CsrMatrix } from '../../runtime/tensor.js';

const pattern = (lengths: Int32Array): CsrMatrix => lengthsPattern(lengths);

/** The longest row of the blocks the sample reads for `seed` (0 where every row is read: the exact longest then). */
function sampledLongest(m: CsrMatrix, seed: number): number {
  const blocks = quickBlocks(m.rows, m.rowPtr[m.rows]!);
  let longest = 0;
  for (let b = 0; b < blocks; b++) {
    const first = blockStart(m.rows, blocks, b, seed);
    for (let r = first; r < first + QUICK_BLOCK_ROWS; r++) longest = Math.max(longest, m.rowPtr[r + 1]! - m.rowPtr[r]!);
  }
  return longest;
}

function checkBounds(lengths: Int32Array, seed: number): void {
  const m = pattern(lengths);
  const exact = rowLengthStats(m.rowPtr, m.rows);
  const s = sampledRowStats(m, seed);
  for (const [k, v] of Object.entries(s)) expect(Number.isFinite(v), k).toBe(true);
  expect(s.rowLenMean).toBe(exact.rowLenMean);
  expect(s.rowLenMax).toBeLessThanOrEqual(exact.rowLenMax);
  expect(s.rowLenMax).toBeGreaterThanOrEqual(sampledLongest(m, seed));
  expect(lengths.includes(s.rowLenMax) || s.rowLenMax === 0).toBe(true);
  expect(s.rowLenCv).toBeGreaterThanOrEqual(0);
  expect(s.emptyRowFraction).toBeGreaterThanOrEqual(0);
  expect(s.emptyRowFraction).toBeLessThanOrEqual(1);
  expect(s.top1PctNnzShare).toBeGreaterThanOrEqual(0);
  expect(s.top1PctNnzShare).toBeLessThanOrEqual(1);
  expect(sampledRowStats(m, seed)).toEqual(s);
}

/** One run of rows: `count` rows of a kind. */
const run = fc.record({
  count: fc.integer({ min: 1, max: 3000 }),
  kind: fc.constantFrom('short', 'empty', 'tail', 'hubs'),
  base: fc.integer({ min: 1, max: 40 }),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
});

describe('sampled row statistics on generated patterns', () => {
  it('are finite, in range, bounded by the pattern and the sample, and the same for the same seed', () => {
    fc.assert(
      fc.property(
        fc.array(run, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 9 }),
        (runs, sorted, seed) => {
          const lengths: number[] = [];
          for (const r of runs) {
            let x = r.seed;
            const next = (): number => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), (x >>> 8) / 2 ** 24);
            for (let i = 0; i < r.count; i++)
              lengths.push(
                r.kind === 'empty'
                  ? 0
                  : r.kind === 'short'
                    ? r.base
                    : r.kind === 'tail'
                      ? Math.min(20_000, Math.floor(r.base / Math.pow(1 - next(), 1 / 1.3)))
                      : next() < 0.3
                        ? 500 * r.base
                        : 1 + (r.base % 5),
              );
          }
          const a = Int32Array.from(lengths);
          if (sorted) a.sort().reverse();
          checkBounds(a, seed);
        },
      ),
      { numRuns: 300, seed: 20261206 },
    );
  });

  it('hold where every sampled block is all hubs, more than the sample takes as themselves', () => {
    // 100,000 rows of 2 entries but the rows the sample reads at seed 0, hubs of 2,000 (16 blocks: the block count
    // does not move with them). Every block claims far more than the rows around it hold, so each takes its rows
    // as themselves: 256 rows for the 32 places, the longest kept and the blocks' rows left read again.
    const rows = 100_000;
    const lengths = new Int32Array(rows).fill(2);
    const blocks = 16;
    for (let b = 0; b < blocks; b++) {
      const first = blockStart(rows, blocks, b, 0);
      for (let r = first; r < first + QUICK_BLOCK_ROWS; r++) lengths[r] = 2000;
    }
    const m = pattern(lengths);
    expect(quickBlocks(rows, m.rowPtr[rows]!)).toBe(blocks);
    for (let seed = 0; seed < 10; seed++) checkBounds(lengths, seed);
    // The sample is the hubs and nothing else here, so its shares say little (the top-1% share 1 against an exact
    // 0.72: the hubs left standing stand for the rest of the top 1%); the bounds hold, and the longest row is seen.
    expect(sampledRowStats(m, 0).rowLenMax).toBe(2000);
  });
});
