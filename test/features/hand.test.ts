import { describe, expect, it } from 'vitest';
import { FEATURE_KEYS, features, featureKeysOfTier, tier0, tier1, tier2 } from '../../runtime/features/index.js';
import type { CsrMatrix, DenseTensor } from '../../runtime/tensor.js';
import { csrOf, forbiddenValues, watched } from './reference.js';

const emptyRows = (rows: number, cols: number): CsrMatrix =>
  csrOf(
    cols,
    Array.from({ length: rows }, () => []),
  );
const dense = (shape: number[]): DenseTensor => ({
  format: 'dense',
  shape,
  data: new Float64Array(shape.reduce((a, b) => a * b, 1)),
});

describe('tier 0', () => {
  it('0 x 0 matrix: density 0', () => {
    expect(tier0(emptyRows(0, 0))).toEqual({ format: 'csr', rows: 0, cols: 0, nnz: 0, density: 0 });
  });

  it('1 x 1 with and without its entry', () => {
    expect(tier0(csrOf(1, [[0]]))).toEqual({ format: 'csr', rows: 1, cols: 1, nnz: 1, density: 1 });
    expect(tier0(emptyRows(1, 1)).density).toBe(0);
  });

  it('counts explicit zeros as entries', () => {
    const m = csrOf(4, [[0, 3], [1]]);
    m.values.fill(0);
    expect(tier0(m)).toEqual({ format: 'csr', rows: 2, cols: 4, nnz: 3, density: 3 / 8 });
  });

  it('dense tensors: every position is stored; ranks 0, 1, 2, 3', () => {
    expect(tier0(dense([3, 4]))).toEqual({ format: 'dense', rows: 3, cols: 4, nnz: 12, density: 1 });
    expect(tier0(dense([]))).toEqual({ format: 'dense', rows: 1, cols: 1, nnz: 1, density: 1 });
    expect(tier0(dense([5]))).toEqual({ format: 'dense', rows: 5, cols: 1, nnz: 5, density: 1 });
    expect(tier0(dense([2, 3, 4]))).toEqual({ format: 'dense', rows: 6, cols: 4, nnz: 24, density: 1 });
    expect(tier0(dense([0, 4]))).toEqual({ format: 'dense', rows: 0, cols: 4, nnz: 0, density: 0 });
  });
});

describe('tier 1 (hand-computed)', () => {
  const zeros = {
    rowLenMean: 0,
    rowLenMax: 0,
    rowLenMin: 0,
    rowLenCv: 0,
    rowLenGini: 0,
    emptyRowFraction: 0,
    top1PctNnzShare: 0,
    rowLenChangeFraction: 0,
  };

  it('0 x 0: all zero', () => {
    expect(tier1(emptyRows(0, 0))).toEqual(zeros);
  });

  it('1 x 1 with one entry, and empty', () => {
    expect(tier1(csrOf(1, [[0]]))).toEqual({ ...zeros, rowLenMean: 1, rowLenMax: 1, rowLenMin: 1, top1PctNnzShare: 1 });
    expect(tier1(emptyRows(1, 1))).toEqual({ ...zeros, emptyRowFraction: 1 });
  });

  it('all rows empty', () => {
    expect(tier1(emptyRows(5, 3))).toEqual({ ...zeros, emptyRowFraction: 1 });
  });

  it('one dense row among 199 empty ones: Gini (n-1)/n, CV sqrt(n-1), top-1% share 1', () => {
    const rows = Array.from({ length: 200 }, (_, r) => (r === 7 ? Array.from({ length: 50 }, (_, c) => c) : []));
    const f = tier1(csrOf(50, rows));
    expect(f.rowLenMean).toBe(0.25);
    expect(f.rowLenMax).toBe(50);
    expect(f.rowLenMin).toBe(0);
    expect(f.rowLenCv).toBeCloseTo(Math.sqrt(199), 12);
    expect(f.rowLenGini).toBeCloseTo(199 / 200, 14);
    expect(f.emptyRowFraction).toBe(199 / 200);
    expect(f.top1PctNnzShare).toBe(1);
    // Row 7 differs from row 6 and row 8 from it: 2 changes over 199 pairs.
    expect(f.rowLenChangeFraction).toBe(2 / 199);
  });

  it('uniform rows: CV 0, Gini 0, top-1% share = ceil(n/100)/n', () => {
    const f = tier1(
      csrOf(
        300,
        Array.from({ length: 300 }, () => [0, 10, 40]),
      ),
    );
    expect(f).toEqual({ ...zeros, rowLenMean: 3, rowLenMax: 3, rowLenMin: 3, top1PctNnzShare: 3 / 300 });
  });

  it('lengths 0, 1, 2, 3: Gini 10/24, CV sqrt(1.25)/1.5', () => {
    const f = tier1(csrOf(3, [[], [0], [0, 1], [0, 1, 2]]));
    expect(f.rowLenGini).toBeCloseTo(10 / 24, 14);
    expect(f.rowLenCv).toBeCloseTo(Math.sqrt(1.25) / 1.5, 14);
    expect(f.rowLenMean).toBe(1.5);
    expect(f.emptyRowFraction).toBe(0.25);
    expect(f.top1PctNnzShare).toBe(3 / 6); // ceil(4/100) = 1 row
    expect(f.rowLenChangeFraction).toBe(1);
  });

  it('the longest ceil(1%) rows: 250 rows take 3', () => {
    const rows = Array.from({ length: 250 }, (_, r) => (r < 4 ? [0, 1, 2, 3, 4] : [0]));
    // lengths: four 5s, 246 1s; top 3 rows hold 15 of 266
    expect(tier1(csrOf(5, rows)).top1PctNnzShare).toBe(15 / 266);
    // One change, from the fourth row to the fifth, over 249 pairs.
    expect(tier1(csrOf(5, rows)).rowLenChangeFraction).toBe(1 / 249);
  });

  it('reads only rowPtr: no column index, no value', () => {
    const m = csrOf(9, [[1, 2], [], [0, 3, 8]]);
    const f = tier1({ ...m, colIdx: watched(m.colIdx, { n: 0 }, true), values: forbiddenValues(m.values) });
    expect(f.rowLenMax).toBe(3);
  });

  it('rejects decreasing row pointers and is correct on the next call', () => {
    const bad: CsrMatrix = {
      format: 'csr',
      rows: 3,
      cols: 4,
      rowPtr: Int32Array.of(0, 3, 1, 4),
      colIdx: new Int32Array(4),
      values: new Float64Array(4),
    };
    expect(() => tier1(bad)).toThrow(RangeError);
    const tooLong: CsrMatrix = { ...bad, rowPtr: Int32Array.of(0, 300, 2, 4) };
    expect(() => tier1(tooLong)).toThrow(RangeError);
    expect(tier1(csrOf(3, [[], [0], [0, 1], [0, 1, 2]])).rowLenGini).toBeCloseTo(10 / 24, 14);
  });

  it('rows longer than the retained histogram (256, 70,000), then short ones', () => {
    const long = Array.from({ length: 70_000 }, (_, c) => c);
    const f = tier1(csrOf(70_000, [long, [1], long.slice(0, 300)]));
    expect(f.rowLenMax).toBe(70_000);
    expect(f.rowLenMin).toBe(1);
    expect(f.top1PctNnzShare).toBe(70_000 / 70_301);
    expect(tier1(csrOf(2, [[0], [0, 1]]))).toEqual({
      ...zeros,
      rowLenMean: 1.5,
      rowLenMax: 2,
      rowLenMin: 1,
      rowLenCv: 1 / 3,
      rowLenGini: 1 / 6,
      top1PctNnzShare: 2 / 3,
      rowLenChangeFraction: 1,
    });
  });

  it('dense tensors: every row holds cols entries', () => {
    expect(tier1(dense([4, 3]))).toEqual({
      ...zeros,
      rowLenMean: 3,
      rowLenMax: 3,
      rowLenMin: 3,
      top1PctNnzShare: 1 / 4,
    });
    expect(tier1(dense([0, 3]))).toEqual(zeros);
    expect(tier1(dense([2, 0]))).toEqual({ ...zeros, emptyRowFraction: 1 });
  });
});

describe('tier 2 (hand-computed)', () => {
  it('0 x 0 and all-empty rows: nothing read', () => {
    const none = {
      sampledRows: 0,
      sampledEntries: 0,
      colSpanMean: 0,
      bandwidthEstimate: 0,
      bandwidthEstimateNorm: 0,
      localityScore: 0,
    };
    expect(tier2(emptyRows(0, 0))).toEqual(none);
    expect(tier2(emptyRows(5, 3))).toEqual({ ...none, sampledRows: 5 });
  });

  it('1 x 1: one entry read, no pairs', () => {
    expect(tier2(csrOf(1, [[0]]))).toEqual({
      sampledRows: 1,
      sampledEntries: 1,
      colSpanMean: 1,
      bandwidthEstimate: 0,
      bandwidthEstimateNorm: 0,
      localityScore: 0,
    });
  });

  it('locality: gaps 1, 16, 23 give 2/3', () => {
    const f = tier2(csrOf(41, [[0, 1, 17, 40]]));
    expect(f.localityScore).toBe(2 / 3);
    expect(f.colSpanMean).toBe(1);
    expect(f.bandwidthEstimate).toBe(40);
    expect(f.bandwidthEstimateNorm).toBe(40 / 41);
  });

  it('one dense row: exact span and bandwidth from its first and last column, capped reads', () => {
    const rows = Array.from({ length: 200 }, (_, r) => (r === 7 ? Array.from({ length: 50 }, (_, c) => c) : []));
    const m = csrOf(50, rows);
    expect(tier2(m)).toEqual({
      sampledRows: 200,
      sampledEntries: 50,
      colSpanMean: 1,
      bandwidthEstimate: 42,
      bandwidthEstimateNorm: 42 / 200,
      localityScore: 1,
    });
    // E = 8: the first 7 columns and the last one
    const reads = { n: 0 };
    const f = tier2(
      { ...m, colIdx: watched(m.colIdx, reads), values: forbiddenValues(m.values) },
      { maxEntriesPerRow: 8 },
    );
    expect(f).toEqual({
      sampledRows: 200,
      sampledEntries: 8,
      colSpanMean: 1,
      bandwidthEstimate: 42,
      bandwidthEstimateNorm: 42 / 200,
      localityScore: 1,
    });
    expect(reads.n).toBe(8);
  });

  it('uniform rows [0, 10, 40]: locality 1/2, span 41/cols; sampling 10 of 300 rows reads 30 entries', () => {
    const m = csrOf(
      300,
      Array.from({ length: 300 }, () => [0, 10, 40]),
    );
    expect(tier2(m)).toEqual({
      sampledRows: 300,
      sampledEntries: 900,
      colSpanMean: 41 / 300,
      bandwidthEstimate: 299,
      bandwidthEstimateNorm: 299 / 300,
      localityScore: 0.5,
    });
    const reads = { n: 0 };
    const ptrReads = { n: 0 };
    const f = tier2(
      { ...m, rowPtr: watched(m.rowPtr, ptrReads), colIdx: watched(m.colIdx, reads) },
      { samples: 10, seed: 3 },
    );
    expect(f.sampledRows).toBe(10);
    expect(f.sampledEntries).toBe(30);
    expect(reads.n).toBe(30);
    expect(ptrReads.n).toBe(20);
    expect(f.localityScore).toBe(0.5);
    expect(f.bandwidthEstimate).toBeLessThanOrEqual(299);
    // one row per stratum of 30: the last stratum's row is >= 270
    expect(f.bandwidthEstimate).toBeGreaterThanOrEqual(270);
  });

  it('is deterministic for a seed; seeds pick different rows', () => {
    const m = csrOf(
      1000,
      Array.from({ length: 1000 }, (_, r) => [r]),
    );
    const a = tier2(m, { samples: 50, seed: 1 });
    expect(tier2(m, { samples: 50, seed: 1 })).toEqual(a);
    expect(tier2(m, { samples: 50 })).toEqual(tier2(m, { samples: 50, seed: 0 }));
    // diagonal: bandwidth 0 whichever rows, span 1/cols
    expect(a.bandwidthEstimate).toBe(0);
    expect(a.colSpanMean).toBe(1 / 1000);
    const b = csrOf(
      1000,
      Array.from({ length: 1000 }, (_, r) => [0, r]),
    );
    expect(tier2(b, { samples: 50, seed: 1 }).colSpanMean).not.toBe(tier2(b, { samples: 50, seed: 2 }).colSpanMean);
  });

  it('rejects bad options', () => {
    const m = csrOf(1, [[0]]);
    expect(() => tier2(m, { samples: -1 })).toThrow(RangeError);
    expect(() => tier2(m, { samples: 1.5 })).toThrow(RangeError);
    expect(() => tier2(m, { maxEntriesPerRow: 1 })).toThrow(RangeError);
    expect(() => tier2(m, { seed: Number.NaN })).toThrow(RangeError);
    expect(() => tier2(dense([2, 2]), { samples: -1 })).toThrow(RangeError);
  });

  it('dense tensors: exact from the shape, nothing read', () => {
    expect(tier2(dense([3, 5]))).toEqual({
      sampledRows: 0,
      sampledEntries: 0,
      colSpanMean: 1,
      bandwidthEstimate: 4,
      bandwidthEstimateNorm: 4 / 5,
      localityScore: 1,
    });
    expect(tier2(dense([0, 5])).colSpanMean).toBe(0);
  });
});

describe('features()', () => {
  const m = csrOf(4, [[0, 1], [], [3]]);

  it('returns one flat record with the keys of tiers 0..t in FEATURE_KEYS order', () => {
    const t0 = featureKeysOfTier(0);
    const t1 = featureKeysOfTier(1);
    const t2 = featureKeysOfTier(2);
    expect([...t0, ...t1, ...t2]).toEqual(FEATURE_KEYS);
    expect(Object.keys(features(m, 0))).toEqual(t0);
    expect(Object.keys(features(m, 1))).toEqual([...t0, ...t1]);
    expect(Object.keys(features(m, 2))).toEqual(FEATURE_KEYS);
    expect(Object.keys(features(dense([2, 2]), 2))).toEqual(FEATURE_KEYS);
  });

  it('combines tier0, tier1 and tier2', () => {
    expect(features(m, 2, { samples: 2 })).toEqual({ ...tier0(m), ...tier1(m), ...tier2(m, { samples: 2 }) });
  });

  it('every value is finite, and a number except format', () => {
    for (const t of [emptyRows(0, 0), emptyRows(3, 0), m, dense([]), dense([0, 0])]) {
      for (const [k, v] of Object.entries(features(t, 2))) {
        if (k === 'format') expect(typeof v).toBe('string');
        else expect(Number.isFinite(v)).toBe(true);
      }
    }
  });

  it('rejects a tier other than 0, 1, 2', () => {
    expect(() => features(m, 3 as 0)).toThrow(RangeError);
  });
});
