import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { features, rowPtrFromRowIndices, tier1, tier2 } from '../../runtime/features/index.js';
import { csrToCoo, csrToCsc, denseToCsr } from '../../runtime/io/convert.js';
import type { CooMatrix, CsrMatrix } from '../../runtime/tensor.js';
import {
  csrOf,
  cvReference,
  forbiddenValues,
  fullTier2,
  giniReference,
  rowLengths,
  topShareReference,
  watched,
} from './reference.js';

/** Random CSR: some empty rows, some long ones (past the 256-entry retained histogram). */
const arbCsr = fc
  .record({ rows: fc.integer({ min: 0, max: 60 }), cols: fc.integer({ min: 1, max: 400 }) })
  .chain(({ rows, cols }) =>
    fc
      .array(
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: Math.min(cols, 8) }), fc.integer({ min: 0, max: cols })),
        { minLength: rows, maxLength: rows },
      )
      .chain((lens) =>
        fc.tuple(
          ...lens.map((len) =>
            fc.uniqueArray(fc.integer({ min: 0, max: cols - 1 }), { minLength: len, maxLength: len }),
          ),
        ),
      )
      .map((rowsCols) =>
        csrOf(
          cols,
          rowsCols.map((cs) => [...cs].sort((a, b) => a - b)),
        ),
      ),
  );

function shuffled(m: CooMatrix, seed: number): CooMatrix {
  const n = m.values.length;
  const order = Array.from({ length: n }, (_, k) => k);
  let s = seed >>> 0;
  for (let k = n - 1; k > 0; k--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (k + 1);
    [order[k], order[j]] = [order[j]!, order[k]!];
  }
  return {
    ...m,
    rowIdx: Int32Array.from(order, (k) => m.rowIdx[k]!),
    colIdx: Int32Array.from(order, (k) => m.colIdx[k]!),
    values: Float64Array.from(order, (k) => m.values[k]!),
  };
}

describe('tier 1 against plain formulas (property-based)', () => {
  it('mean, max, min, CV, Gini, empty fraction, top-1% share', () => {
    fc.assert(
      fc.property(arbCsr, (m) => {
        const lens = rowLengths(m.rowPtr, m.rows);
        const f = tier1(m);
        const n = m.rows;
        expect(f.rowLenMean).toBe(n > 0 ? m.colIdx.length / n : 0);
        expect(f.rowLenMax).toBe(n > 0 ? Math.max(...lens) : 0);
        expect(f.rowLenMin).toBe(n > 0 ? Math.min(...lens) : 0);
        expect(f.rowLenCv).toBeCloseTo(cvReference(lens), 10);
        expect(f.rowLenGini).toBeCloseTo(giniReference(lens), 12);
        expect(f.emptyRowFraction).toBe(n > 0 ? lens.filter((x) => x === 0).length / n : 0);
        expect(f.top1PctNnzShare).toBeCloseTo(topShareReference(lens), 14);
      }),
      { numRuns: 300 },
    );
  });
});

describe('tier 2 against a full scan (property-based)', () => {
  it('sampling every row with no cap gives the exact span, bandwidth and locality', () => {
    fc.assert(
      fc.property(arbCsr, (m) => {
        const f = tier2(m, { maxEntriesPerRow: Math.max(2, m.cols) });
        const full = fullTier2(m);
        expect(f.sampledRows).toBe(m.rows);
        expect(f.sampledEntries).toBe(m.colIdx.length);
        expect(f.colSpanMean).toBeCloseTo(full.colSpanMean, 12);
        expect(f.bandwidthEstimate).toBe(full.bandwidth);
        expect(f.localityScore).toBeCloseTo(full.locality, 12);
      }),
      { numRuns: 200 },
    );
  });

  it('any sample: reads within S x E, counted reads equal sampledEntries, span and bandwidth within the exact ones', () => {
    fc.assert(
      fc.property(
        arbCsr,
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer(),
        (m, samples, e, seed) => {
          const reads = { n: 0 };
          const f = tier2(
            { ...m, colIdx: watched(m.colIdx, reads), values: forbiddenValues(m.values) },
            { samples, maxEntriesPerRow: e, seed },
          );
          expect(f.sampledRows).toBe(Math.min(samples, m.rows));
          expect(f.sampledEntries).toBe(reads.n);
          expect(f.sampledEntries).toBeLessThanOrEqual(f.sampledRows * e);
          expect(f.bandwidthEstimate).toBeLessThanOrEqual(fullTier2(m).bandwidth);
          expect(f.colSpanMean).toBeGreaterThanOrEqual(0);
          expect(f.colSpanMean).toBeLessThanOrEqual(1);
          expect(f.localityScore).toBeGreaterThanOrEqual(0);
          expect(f.localityScore).toBeLessThanOrEqual(1);
          expect(f.bandwidthEstimateNorm).toBeLessThan(1);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('CSC and COO inputs: features of the rows, as for CSR', () => {
  it('sorted COO, shuffled COO and CSC give the CSR figures for tiers 1 and 2', () => {
    fc.assert(
      fc.property(arbCsr, fc.integer(), (m, seed) => {
        const want = features(m, 2, { samples: 7, maxEntriesPerRow: 5, seed: 11 });
        const coo = csrToCoo(m);
        for (const other of [coo, shuffled(coo, seed), csrToCsc(m)]) {
          const got = features(other, 2, { samples: 7, maxEntriesPerRow: 5, seed: 11 });
          expect({ ...got, format: 'csr' }).toEqual(want);
          expect(tier1(other)).toEqual(tier1(m));
          expect(tier2(other, { samples: 7, maxEntriesPerRow: 5, seed: 11 })).toEqual(
            tier2(m, { samples: 7, maxEntriesPerRow: 5, seed: 11 }),
          );
        }
      }),
      { numRuns: 150 },
    );
  });

  it('COO sorted by row but not by column within a row is converted for tier 2', () => {
    const coo: CooMatrix = {
      format: 'coo',
      rows: 2,
      cols: 9,
      rowIdx: Int32Array.of(0, 0, 1),
      colIdx: Int32Array.of(8, 1, 4),
      values: new Float64Array(3),
    };
    expect(tier2(coo)).toEqual(tier2(csrOf(9, [[1, 8], [4]])));
  });

  it('COO tier 1 reads only row indices, in any order, without sorting', () => {
    const m = csrOf(6, [[1, 4], [], [0, 2, 5]]);
    const coo = shuffled(csrToCoo(m), 9);
    const f = tier1({ ...coo, colIdx: watched(coo.colIdx, { n: 0 }, true), values: forbiddenValues(coo.values) });
    expect(f).toEqual(tier1(m));
  });

  it('counting row indices: pointers, range check', () => {
    expect(rowPtrFromRowIndices(Int32Array.of(2, 0, 2), 4)).toEqual(Int32Array.of(0, 1, 1, 3, 3));
    expect(rowPtrFromRowIndices(new Int32Array(0), 0)).toEqual(Int32Array.of(0));
    expect(() => rowPtrFromRowIndices(Int32Array.of(4), 4)).toThrow(RangeError);
    expect(() => rowPtrFromRowIndices(Int32Array.of(-1), 4)).toThrow(RangeError);
  });

  it('a dense tensor and its CSR (all positions kept) agree on tiers 0 and 1', () => {
    const t = { format: 'dense' as const, shape: [7, 5], data: new Float64Array(35) };
    const csr: CsrMatrix = denseToCsr(t, true);
    expect({ ...features(t, 1), format: 'csr' }).toEqual(features(csr, 1));
  });
});
