/**
 * Features of adversarial inputs (issue 14 item 4), exact (tiers 0-2) and
 * sampled (runtime/features/quick.ts, what a runtime reads of a new
 * pattern): every feature is a finite number (a NaN would go one way at
 * every test of a guard tree: a silent wrong partition), empty shapes give
 * the values docs/FEATURES.md defines, values (NaN, inf) change no feature,
 * and one dense row among short or empty rows moves the sampled row
 * statistics as it moves the exact ones, whether a sampled block holds the
 * row or not. Malformed row pointers are a RangeError, not NaN features.
 */
import { describe, expect, it } from 'vitest';
import { features } from '../../runtime/features/index.js';
import { quickFeatures, sampledRowStats, SampledFeatures } from '../../runtime/features/quick.js';
import { rowLengthStats } from '../../runtime/features/tier1.js';
import type { CsrMatrix } from '../../runtime/tensor.js';
import { asCoo, csrOf, denseRowMatrix, emptyMatrix, MAX_COLS, nonFiniteMatrix, wideMatrix } from './inputs.js';

const CASES: [string, () => CsrMatrix][] = [
  ['one dense row, every row read', () => csrOf(5, 5, [[], [], [0, 1, 2, 3, 4], [], [4]])],
  ['a 400-entry row among 4000 short rows, first row', () => denseRowMatrix(4000, 400, 0)],
  ['a 400-entry row among 4000 short rows, middle row', () => denseRowMatrix(4000, 400, 1333)],
  ['a 400-entry row among 4000 short rows, last row', () => denseRowMatrix(4000, 400, 3999)],
  ['a full row among 4000 short rows', () => denseRowMatrix(4000, 4000, 2718)],
  ['a 100000-entry row among 200000 short rows', () => denseRowMatrix(200_000, 100_000, 123_457)],
  ['a full row among 50000 empty rows', () => denseRowMatrix(50_000, 50_000, 31_337, 0)],
  ['every row empty, 5 x 5', () => emptyMatrix(5, 5)],
  ['every row empty, 100000 x 100000', () => emptyMatrix(100_000, 100_000)],
  ['1 x 1', () => csrOf(1, 1, [[0]], [2.5])],
  ['1 x 1 without an entry', () => emptyMatrix(1, 1)],
  ['0 x 0', () => emptyMatrix(0, 0)],
  ['0 x 5', () => emptyMatrix(0, 5)],
  ['5 x 0', () => emptyMatrix(5, 0)],
  ['3 x (2^31 - 1) with 4 entries', wideMatrix],
  ['NaN and infinite values', nonFiniteMatrix],
];

const finite = (what: string, f: object): void => {
  for (const [k, v] of Object.entries(f))
    if (k !== 'format') expect(Number.isFinite(v), `${what}: ${k} = ${String(v)}`).toBe(true);
};

describe('features of adversarial inputs', () => {
  for (const [name, make] of CASES)
    it(`${name}: exact and sampled features are finite, and agree`, () => {
      const A = make();
      const exact = features(A, 2);
      finite(`${name} exact`, exact);
      // CSC and COO count rows instead of reading pointers: the same tier 0 and 1.
      const { format: _f, ...viaCoo } = features(asCoo(A), 1);
      const {
        format: _g,
        sampledRows: _s,
        sampledEntries: _e,
        colSpanMean: _c,
        bandwidthEstimate: _b,
        bandwidthEstimateNorm: _n,
        localityScore: _l,
        ...exact01
      } = exact;
      expect(viaCoo).toEqual(exact01);
      const q = quickFeatures(A);
      finite(`${name} sampled`, q);
      const lazy = new SampledFeatures(A);
      finite(`${name} sampled (runtime record)`, lazy.toJSON());
      expect([q.rows, q.cols, q.nnz, q.rowLenMean]).toEqual([exact.rows, exact.cols, exact.nnz, exact.rowLenMean]);
      // The longest row is found by the search of the unsampled rows when no block holds it.
      expect(q.rowLenMax, 'rowLenMax').toBe(exact.rowLenMax);
      expect(Math.abs(q.rowLenCv - exact.rowLenCv), 'rowLenCv').toBeLessThanOrEqual(0.05 * exact.rowLenCv + 1e-12);
      expect(Math.abs(q.top1PctNnzShare - exact.top1PctNnzShare), 'top1PctNnzShare').toBeLessThanOrEqual(
        0.05 * exact.top1PctNnzShare + 0.005,
      );
      expect(Math.abs(q.emptyRowFraction - exact.emptyRowFraction), 'emptyRowFraction').toBeLessThanOrEqual(0.02);
    });

  it('empty shapes give the defined values (docs/FEATURES.md), never NaN', () => {
    const empty = features(emptyMatrix(5, 5), 2);
    expect(empty).toMatchObject({
      nnz: 0,
      density: 0,
      rowLenMean: 0,
      rowLenMax: 0,
      rowLenMin: 0,
      rowLenCv: 0,
      rowLenGini: 0,
      emptyRowFraction: 1,
      top1PctNnzShare: 0,
      rowLenChangeFraction: 0,
      colSpanMean: 0,
      bandwidthEstimate: 0,
      localityScore: 0,
    });
    for (const [r, c] of [
      [0, 0],
      [0, 5],
    ] as const)
      expect(features(emptyMatrix(r, c), 2), `${r} x ${c}`).toMatchObject({
        density: 0,
        rowLenMean: 0,
        rowLenMax: 0,
        rowLenCv: 0,
        rowLenGini: 0,
        emptyRowFraction: 0,
        top1PctNnzShare: 0,
        localityScore: 0,
        bandwidthEstimateNorm: 0,
      });
    expect(features(emptyMatrix(5, 0), 1)).toMatchObject({
      density: 0,
      rowLenMean: 0,
      emptyRowFraction: 1,
      rowLenCv: 0,
    });
    expect(quickFeatures(emptyMatrix(0, 0))).toEqual({
      rows: 0,
      cols: 0,
      nnz: 0,
      rowLenMean: 0,
      rowLenMax: 0,
      rowLenCv: 0,
      emptyRowFraction: 0,
      top1PctNnzShare: 0,
      sampledRows: 0,
      localityScore: 0,
      rowLenChangeFraction: 0,
      bandwidthEstimateNorm: 0,
    });
    expect(quickFeatures(emptyMatrix(100_000, 100_000))).toMatchObject({
      rowLenMean: 0,
      rowLenMax: 0,
      rowLenCv: 0,
      emptyRowFraction: 1,
      top1PctNnzShare: 0,
      localityScore: 0,
      bandwidthEstimateNorm: 0,
    });
    expect(features(csrOf(1, 1, [[0]]), 1)).toMatchObject({
      density: 1,
      rowLenMean: 1,
      rowLenCv: 0,
      rowLenGini: 0,
      emptyRowFraction: 0,
      top1PctNnzShare: 1,
    });
  });

  it('2^31 - 1 columns: tier 0 and the shape-relative features stay finite and in range', () => {
    const f = features(wideMatrix(), 2);
    expect(f.cols).toBe(MAX_COLS);
    expect(f.density).toBeGreaterThan(0);
    expect(f.density).toBeLessThan(1e-9);
    expect(f.bandwidthEstimate).toBe(MAX_COLS - 2);
    expect(f.bandwidthEstimateNorm).toBeLessThan(1);
    expect(f.colSpanMean).toBeGreaterThan(0);
  });

  it('values never change a feature: NaN and inf give what 1.0 gives', () => {
    const A = nonFiniteMatrix();
    const ones = { ...A, values: new Float64Array(A.values.length).fill(1) };
    expect(features(A, 2)).toEqual(features(ones, 2));
    expect(quickFeatures(A)).toEqual(quickFeatures(ones));
  });

  it('malformed row pointers are a RangeError, not NaN features', () => {
    const shortPtr: CsrMatrix = {
      format: 'csr',
      rows: 10,
      cols: 3,
      rowPtr: new Int32Array([0, 1, 2]),
      colIdx: new Int32Array([0, 1]),
      values: new Float64Array(2),
    };
    const decreasing: CsrMatrix = {
      format: 'csr',
      rows: 3,
      cols: 3,
      rowPtr: new Int32Array([0, 2, 1, 3]),
      colIdx: new Int32Array([0, 1, 2]),
      values: new Float64Array(3),
    };
    const backwards: CsrMatrix = {
      format: 'csr',
      rows: 2,
      cols: 3,
      rowPtr: new Int32Array([3, 1, 0]),
      colIdx: new Int32Array(3),
      values: new Float64Array(3),
    };
    const negative: CsrMatrix = {
      format: 'csr',
      rows: -1,
      cols: 3,
      rowPtr: new Int32Array([0]),
      colIdx: new Int32Array(0),
      values: new Float64Array(0),
    };
    for (const m of [shortPtr, decreasing, backwards]) {
      expect(() => rowLengthStats(m.rowPtr, m.rows)).toThrow(RangeError);
      expect(() => sampledRowStats(m)).toThrow(RangeError);
    }
    expect(() => sampledRowStats(negative)).toThrow(RangeError);
    // Pointers of a large matrix that drop back between its sampled blocks (the sample checks what it reads;
    // every pointer is checked where a backend lays the pattern out, runtime/wasm/layout.ts).
    const big = denseRowMatrix(100_000, 10, 5);
    const broken = { ...big, rowPtr: big.rowPtr.slice() };
    broken.rowPtr.fill(5, 50_001, 100_000);
    expect(() => sampledRowStats(broken)).toThrow(RangeError);
  });
});
