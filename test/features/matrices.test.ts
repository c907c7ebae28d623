import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ENTRIES_PER_ROW, DEFAULT_SAMPLES, features, tier1, tier2 } from '../../runtime/features/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import type { CooMatrix } from '../../runtime/tensor.js';
import { MANIFEST, MATRIX_DIR, roundsTo } from './manifest.js';
import { forbiddenValues, giniReference, rowLengths, topShareReference, watched } from './reference.js';

describe('features of the shared real matrices', () => {
  for (const row of MANIFEST) {
    it(`${row.file}: tiers 0 and 1 match MANIFEST.md, tier 2 is bounded and below the exact half-bandwidth`, () => {
      const data = loadMatrix(join(MATRIX_DIR, row.file));
      if (data.kind !== 'coordinate') throw new Error('expected coordinate data');
      const csr = toCsr(data);
      const f = features(csr, 2);

      // tier 0
      expect([f.rows, f.cols, f.nnz]).toEqual([row.rows, row.cols, row.nnz]);
      expect(f.density).toBe(row.nnz / (row.rows * row.cols));
      // MANIFEST's printed density is nnz/(rows*cols) to 3 digits except two entries, off by < 2%:
      // west0479 prints 8.33e-03 (1910/479^2 = 8.32e-03), luxembourg_osm 1.80e-05 (239332/114599^2 = 1.82e-05).
      expect(Math.abs(f.density / Number(row.density) - 1)).toBeLessThan(0.02);
      if (row.file !== 'west0479.mtx' && row.file !== 'luxembourg_osm.mtx')
        expect(roundsTo(f.density, row.density)).toBe(true);

      // tier 1 against MANIFEST
      expect(f.rowLenMax).toBe(row.maxRowLen);
      expect(f.rowLenMin).toBe(row.minRowLen);
      expect(roundsTo(f.rowLenMean, row.meanRowLen), `mean ${f.rowLenMean} vs ${row.meanRowLen}`).toBe(true);
      expect(roundsTo(f.rowLenCv, row.rowLenCv), `CV ${f.rowLenCv} vs ${row.rowLenCv}`).toBe(true);
      expect(f.emptyRowFraction * row.rows).toBeCloseTo(row.emptyRows, 9);
      // ... and Gini / top-1% share against plain formulas
      const lens = rowLengths(csr.rowPtr, csr.rows);
      expect(f.rowLenGini).toBeCloseTo(giniReference(lens), 12);
      expect(f.top1PctNnzShare).toBeCloseTo(topShareReference(lens), 14);

      // tier 1 from the reader's entries as a COO in file order (rows counted, not sorted)
      const coo: CooMatrix = {
        format: 'coo',
        rows: data.rows,
        cols: data.cols,
        rowIdx: data.rowIdx,
        colIdx: data.colIdx,
        values: data.values,
      };
      expect(tier1(coo)).toEqual(tier1(csr));

      // tier 2: deterministic, bounded, a lower bound of the exact half-bandwidth (exact when every row is sampled)
      expect(features(csr, 2)).toEqual(f);
      expect(f.sampledRows).toBe(Math.min(row.rows, DEFAULT_SAMPLES));
      expect(f.sampledEntries).toBeLessThanOrEqual(f.sampledRows * DEFAULT_MAX_ENTRIES_PER_ROW);
      expect(f.bandwidthEstimate).toBeLessThanOrEqual(row.halfBandwidth);
      if (row.rows <= DEFAULT_SAMPLES) expect(f.bandwidthEstimate).toBe(row.halfBandwidth);
      expect(f.bandwidthEstimateNorm).toBe(f.bandwidthEstimate / Math.max(row.rows, row.cols));
      expect(f.colSpanMean).toBeGreaterThan(0);
      expect(f.colSpanMean).toBeLessThanOrEqual(1);
      expect(f.localityScore).toBeGreaterThanOrEqual(0);
      expect(f.localityScore).toBeLessThanOrEqual(1);

      // a small sample reads at most samples x E column indices and no value, whatever nnz is
      const reads = { n: 0 };
      const ptrReads = { n: 0 };
      const small = tier2(
        {
          ...csr,
          rowPtr: watched(csr.rowPtr, ptrReads),
          colIdx: watched(csr.colIdx, reads),
          values: forbiddenValues(csr.values),
        },
        { samples: 16, maxEntriesPerRow: 8, seed: 5 },
      );
      expect(small.sampledEntries).toBe(reads.n);
      expect(reads.n).toBeLessThanOrEqual(16 * 8);
      expect(ptrReads.n).toBe(2 * Math.min(16, row.rows));
      expect(small.bandwidthEstimate).toBeLessThanOrEqual(row.halfBandwidth);
    });
  }

  it('separates the structures MANIFEST names', () => {
    const f = (file: string) => features(toCsr(loadMatrix(join(MATRIX_DIR, file))), 2);
    // perfectly uniform rows
    expect(f('dnn_n1024-l1.mtx').rowLenGini).toBe(0);
    expect(f('ash219.mtx').rowLenCv).toBe(0);
    // extreme row skew: one near-dense row
    const adder = f('adder_dcop_05.mtx');
    const whitaker = f('whitaker3.mtx');
    expect(adder.top1PctNnzShare).toBeGreaterThan(0.1); // the 1,310-entry row alone holds 11.8%
    expect(adder.top1PctNnzShare).toBeGreaterThan(5 * whitaker.top1PctNnzShare);
    expect(adder.rowLenGini).toBeGreaterThan(4 * whitaker.rowLenGini);
    // banded: narrow band, local columns; a road network scatters
    const olm = f('olm1000.mtx');
    expect(olm.bandwidthEstimate).toBe(3);
    expect(olm.localityScore).toBe(1);
    expect(f('luxembourg_osm.mtx').localityScore).toBeLessThan(olm.localityScore);
  });
});
