/**
 * Corner cases of the sampled row statistics' crowded blocks and the
 * searches a matrix's size affords (runtime/features/sampled-rows.ts,
 * gap-search.ts, sample-blocks.ts), each asserting one figure or
 * invariant: the longest row seen within the top-1% share, a whole sample
 * taken as long rows, bad pointers reported on every path (a fall of 2^31
 * or more included), empty patterns, a huge first or last row, a pattern
 * read whole at the largest sample.
 */
import { describe, expect, it } from 'vitest';
import { blockStart } from '../../runtime/features/sample-blocks.js';
import { quickBlocks, sampledRowStats } from '../../runtime/features/quick.js';
import { rowLengthStats } from '../../runtime/features/tier1.js';
import type { CsrMatrix } from '../../runtime/tensor.js';
import { lengthsPattern, rowPointerPattern } from '../../bench/power-law-rows.js';

/** A pattern of these row pointers (columns 2^20: no row statistic reads them). */
const csr = (rowPtr: Int32Array): CsrMatrix => rowPointerPattern(rowPtr, 1 << 20);
const fromLengths = (lengths: ArrayLike<number>): CsrMatrix => lengthsPattern(lengths, 1 << 20);

describe('sampled row statistics: crowded blocks and the top-1% share', () => {
  /**
   * 1,000 rows, 2 blocks (seed 2: rows 392-407 and 500-515). Block 0's 16 rows of 100 entries (more than
   * QUICK_LONG_ROW_MEANS x the mean of 21.9) sit among empty rows, so the block is crowded and all 16 are taken as
   * long rows; block 1 holds a row of 300 among rows of 40 and is not crowded (its claim, 28,125, is under twice the
   * 20,260 entries after block 0). With the long rows first, rows of 100 filled the ten top-1% slots ahead of the
   * longer standing row of 300 that rowLenMax reports.
   */
  it('keep the longest row seen within the top 1% when a crowded block holds shorter rows than a standing one', () => {
    const rows = 1000;
    const seed = 2;
    expect(blockStart(rows, 2, 0, seed)).toBe(392);
    expect(blockStart(rows, 2, 1, seed)).toBe(500);
    const lengths = new Int32Array(rows);
    for (let r = 392; r < 408; r++) lengths[r] = 100;
    for (let r = 500; r < rows; r++) lengths[r] = 40;
    lengths[503] = 300;
    const m = fromLengths(lengths);
    expect(quickBlocks(rows, m.rowPtr[rows]!)).toBe(2);
    const s = sampledRowStats(m, seed);
    const exact = rowLengthStats(m.rowPtr, rows);
    expect(s.rowLenMax).toBe(300);
    // Any matrix holding a row of rowLenMax entries has at least that row in its top 1%.
    expect(s.top1PctNnzShare).toBeGreaterThanOrEqual(s.rowLenMax / s.nnz);
    // Exact: 300 + 9 x 100 of 21,860 entries (0.0549); with the long rows first, 10 x 100 (0.0457).
    expect(s.top1PctNnzShare).toBeCloseTo(exact.top1PctNnzShare, 3);
  });

  it('count a whole crowded sample as long rows without NaN (2 blocks, every sampled row taken)', () => {
    // Only the two sampled blocks hold entries: both are crowded, all 32 sampled rows count as themselves.
    const rows = 1000;
    const seed = 0;
    const lengths = new Int32Array(rows);
    for (let b = 0; b < 2; b++) {
      const first = blockStart(rows, 2, b, seed);
      for (let r = first; r < first + 16; r++) lengths[r] = 10 + b;
    }
    const m = fromLengths(lengths);
    expect(quickBlocks(rows, m.rowPtr[rows]!)).toBe(2);
    const s = sampledRowStats(m, seed);
    const exact = rowLengthStats(m.rowPtr, rows);
    for (const [k, v] of Object.entries(s)) expect(Number.isFinite(v), k).toBe(true);
    expect(s.rowLenMax).toBe(11);
    // 5.42 against an exact 5.51: the unsampled rows (all empty) count for nothing rather than for their deviation.
    expect(Math.abs(s.rowLenCv / exact.rowLenCv - 1)).toBeLessThan(0.05);
    // The top 1% (10 rows) are ten of the long rows of 11 entries.
    expect(s.top1PctNnzShare).toBeCloseTo(110 / 336, 12);
  });
});

describe('sampled row statistics: row pointers that decrease where the sample reads them', () => {
  it('throw RangeError for a pointer of a later block after a crowded first block (scoreGaps returns early)', () => {
    const rows = 50_000;
    const seed = 1;
    const lengths = new Int32Array(rows);
    for (let r = 0; r < rows; r += 7) lengths[r] = 1;
    const first0 = blockStart(rows, 2, 0, seed);
    for (let r = first0; r < first0 + 16; r++) lengths[r] = 5000;
    const m = fromLengths(lengths);
    expect(quickBlocks(rows, m.rowPtr[rows]!)).toBe(10);
    const blocks = 10;
    // The first block is crowded under the pointers as they are.
    const ok = sampledRowStats(m, seed);
    expect(ok.rowLenMax).toBe(5000);
    for (const b of [1, blocks - 1]) {
      const bad = Int32Array.from(m.rowPtr);
      bad[blockStart(rows, blocks, b, seed)] = -1;
      expect(() => sampledRowStats(csr(bad), seed)).toThrow(RangeError);
    }
  });

  it('throw RangeError where a pointer falls by 2^31 or more inside a sampled block (int32 lengths wrap)', () => {
    const rows = 100;
    const rowPtr = new Int32Array(rows + 1);
    for (let r = 0; r <= rows; r++) rowPtr[r] = r;
    const first = blockStart(rows, quickBlocks(rows, rows), 0, 0);
    // 2147483647 then -2: a decrease, but (-2 - 2147483647) | 0 is +2147483647.
    rowPtr[first + 1] = 2147483647;
    rowPtr[first + 2] = -2;
    expect(() => sampledRowStats(csr(rowPtr), 0)).toThrow(RangeError);
  });

  it('throw RangeError for the same wrap where every row is read', () => {
    const rowPtr = Int32Array.from({ length: 11 }, (_, i) => i);
    rowPtr[3] = 2147483647;
    rowPtr[4] = -2;
    expect(() => sampledRowStats(csr(rowPtr), 0)).toThrow(RangeError);
  });
});

describe('sampled row statistics: shapes at the edges', () => {
  it('give 0 and 1 where every row is empty, sampled (2 blocks) or read whole', () => {
    for (const rows of [0, 32, 33, 100_000]) {
      const s = sampledRowStats(fromLengths(new Int32Array(rows)), 3);
      expect(s.rowLenMax).toBe(0);
      expect(s.rowLenCv).toBe(0);
      expect(s.top1PctNnzShare).toBe(0);
      expect(s.emptyRowFraction).toBe(rows > 0 ? 1 : 0);
      expect(s.sampledRows).toBe(rows > 32 ? 32 : rows);
    }
  });

  it('find one huge row at the first or the last row of 300,000 short rows with the searches 2^19 entries afford', () => {
    const rows = 300_000;
    for (const at of [0, rows - 1]) {
      const lengths = new Int32Array(rows).fill(3);
      lengths[at] = 1_500_000;
      const m = fromLengths(lengths);
      const s = sampledRowStats(m, 0);
      expect(s.rowLenMax).toBe(1_500_000);
      expect(s.top1PctNnzShare).toBeLessThanOrEqual(1);
      expect(s.top1PctNnzShare).toBeGreaterThanOrEqual(1_500_000 / s.nnz);
    }
  });

  it('read a matrix of 4,096 rows and 2^24 entries or more whole (the 256-block sample covers it) and exactly', () => {
    const rows = 4096;
    const lengths = Int32Array.from({ length: rows }, (_, r) => 4096 + ((r * 37) % 512));
    const m = fromLengths(lengths);
    const nnz = m.rowPtr[rows]!;
    expect(quickBlocks(rows, nnz)).toBe(0);
    const s = sampledRowStats(m, 5);
    const exact = rowLengthStats(m.rowPtr, rows);
    expect(s.sampledRows).toBe(rows);
    expect(s.rowLenMax).toBe(exact.rowLenMax);
    expect(s.top1PctNnzShare).toBeCloseTo(exact.top1PctNnzShare, 12);
    expect(s.rowLenCv).toBeCloseTo(exact.rowLenCv, 9);
  });
});
