/**
 * Bounded-cost features (runtime/features/quick.ts) against the exact ones
 * on every real matrix and ten seeds: exact where every row is read, within
 * the errors docs/FEATURES.md states elsewhere (medians over the trials),
 * never more rows read than the bound, the same figures for the same seed.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  QUICK_BLOCK_ROWS,
  QUICK_MAX_BLOCKS,
  quickFeatures,
  SampledFeatures,
  sampledBandwidth,
  sampledRowChange,
} from '../../runtime/features/quick.js';
import { sparseFeaturesOf } from '../../runtime/guards/features.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import type { CsrMatrix } from '../../runtime/tensor.js';

const M = join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'matrices');
const files = readdirSync(M).filter((f) => /\.(mtx|cites|txt)$/.test(f));
const mats = new Map<string, CsrMatrix>(files.map((f) => [f, toCsr(loadMatrix(join(M, f)))]));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
/** The farthest column from its row over every row, / max(rows, cols): what the sampled band bounds from below. */
function exactBand(m: CsrMatrix): number {
  let band = 0;
  for (let r = 0; r < m.rows; r++) {
    const s = m.rowPtr[r]!;
    const e = m.rowPtr[r + 1]!;
    if (e > s) band = Math.max(band, Math.abs(r - m.colIdx[s]!), Math.abs(r - m.colIdx[e - 1]!));
  }
  return band / Math.max(m.rows, m.cols);
}

describe('bounded-cost features', () => {
  it('read at most the bound of rows, are deterministic per seed, and are exact in tier 1 where every row is read', () => {
    for (const [f, m] of mats) {
      const q = quickFeatures(m);
      expect(q.sampledRows, f).toBeLessThanOrEqual(
        Math.max(m.rows > QUICK_MAX_BLOCKS * QUICK_BLOCK_ROWS ? 0 : m.rows, QUICK_MAX_BLOCKS * QUICK_BLOCK_ROWS),
      );
      expect(quickFeatures(m, 3), f).toEqual(quickFeatures(m, 3));
      const e = sparseFeaturesOf(m, 2);
      expect(q.rowLenMean, f).toBe(e.rowLenMean);
      expect([q.rows, q.cols, q.nnz]).toEqual([e.rows, e.cols, e.nnz]);
      expect(q.rowLenMax, `${f}: a lower bound`).toBeLessThanOrEqual(e.rowLenMax);
      if (q.sampledRows === m.rows) {
        expect(q.rowLenMax, f).toBe(e.rowLenMax);
        expect(q.rowLenCv, f).toBeCloseTo(e.rowLenCv, 10);
        expect(q.emptyRowFraction, f).toBe(e.emptyRowFraction);
        expect(q.top1PctNnzShare, f).toBeCloseTo(e.top1PctNnzShare, 10);
        expect(q.rowLenChangeFraction, f).toBe(e.rowLenChangeFraction);
        expect(q.bandwidthEstimateNorm, f).toBe(exactBand(m));
      }
      expect(q.bandwidthEstimateNorm!, `${f}: a lower bound`).toBeLessThanOrEqual(exactBand(m));
      // The change share is taken on first read only, and is the sample's.
      const s = new SampledFeatures(m);
      expect(s.rowStatsTaken || s.localityTaken).toBe(false);
      expect(s.rowLenChangeFraction, f).toBe(sampledRowChange(m));
      expect(s.rowStatsTaken, f).toBe(false);
      expect(s.bandwidthEstimateNorm, f).toBe(sampledBandwidth(m));
      expect(s.rowStatsTaken || s.localityTaken, f).toBe(false);
    }
  });

  it('are within the stated errors over the real matrices that are sampled (ten seeds each)', () => {
    const cv: number[] = [];
    const empty: number[] = [];
    const top: number[] = [];
    const loc: number[] = [];
    const change: number[] = [];
    const band: number[] = [];
    for (const [, m] of mats) {
      const e = sparseFeaturesOf(m, 2);
      const b = exactBand(m);
      for (let seed = 0; seed < 10; seed++) {
        const q = quickFeatures(m, seed);
        if (q.sampledRows === m.rows) continue;
        cv.push(Math.abs(q.rowLenCv - e.rowLenCv) / Math.max(e.rowLenCv, 1e-9));
        empty.push(Math.abs(q.emptyRowFraction - e.emptyRowFraction));
        top.push(Math.abs(q.top1PctNnzShare - e.top1PctNnzShare));
        loc.push(Math.abs(q.localityScore! - e.localityScore!));
        change.push(Math.abs(q.rowLenChangeFraction! - e.rowLenChangeFraction!));
        band.push(b - q.bandwidthEstimateNorm!);
      }
    }
    expect(cv.length).toBeGreaterThan(100);
    // docs/FEATURES.md: medians 15% (cv, relative), 0 (empty rows), 0.002 (top-1% share), 0.036 (locality).
    expect(median(cv)).toBeLessThanOrEqual(0.2);
    expect(median(empty)).toBeLessThanOrEqual(0.005);
    expect(median(top)).toBeLessThanOrEqual(0.005);
    expect(median(loc)).toBeLessThanOrEqual(0.05);
    // docs/FEATURES.md: median 0.023 (seed 0).
    expect(median(change)).toBeLessThanOrEqual(0.05);
    // docs/FEATURES.md: the band, a maximum over few rows, median 0.096 under the whole matrix's.
    expect(median(band)).toBeLessThanOrEqual(0.12);
  });
});
