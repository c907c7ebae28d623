/**
 * The sampled row statistics (runtime/features/sampled-rows.ts) on
 * generated power-law patterns of 3 x 10^5 - 10^6 rows (bench/
 * power-law-rows.ts), against exact tier 1 over seeds 0-9: the longest row
 * found (the gaps' searches a matrix this size affords), rowLenCv and the
 * top-1% share stable across seeds (no sampled row standing for more than
 * the rows around it hold), and the reads a small share of the entries.
 * docs/FEATURES.md gives the figures.
 */
import { describe, expect, it } from 'vitest';
import { powerLawName, powerLawRows, type PowerLawRows } from '../../bench/power-law-rows.js';
import { countReads } from '../../bench/read-count.js';
import { QUICK_MAX_BLOCKS, quickBlocks, sampledRowStats, searchesAfforded } from '../../runtime/features/quick.js';
import { rowLengthStats } from '../../runtime/features/tier1.js';

const PATTERNS: PowerLawRows[] = [
  { rows: 300_000, alpha: 1.2, xmin: 3, seed: 12, order: 'drawn' },
  { rows: 1_000_000, alpha: 1.5, xmin: 3, seed: 13, order: 'drawn' },
  { rows: 1_000_000, alpha: 2.1, xmin: 3, seed: 14, order: 'drawn' },
  { rows: 1_000_000, alpha: 1.5, xmin: 3, seed: 15, order: 'longest-first' },
];

describe('sampled row statistics on power-law patterns', () => {
  for (const p of PATTERNS) {
    it(powerLawName(p), () => {
      const m = powerLawRows(p);
      const nnz = m.rowPtr[m.rows]!;
      const blocks = quickBlocks(m.rows, nnz);
      expect(blocks).toBeGreaterThan(16);
      expect(blocks).toBeLessThanOrEqual(QUICK_MAX_BLOCKS);
      expect(searchesAfforded(nnz)).toBeGreaterThan(0);
      const exact = rowLengthStats(m.rowPtr, m.rows);
      const counted = countReads(m);
      for (let seed = 0; seed < 10; seed++) {
        const s = sampledRowStats(counted.m, seed);
        const at = `seed ${seed}`;
        // Missed 50-500x before the searches every large matrix affords (the rules found no gap astray).
        expect(s.rowLenMax, at).toBe(exact.rowLenMax);
        // 0.5x-4x across seeds before a block's claim was held to the rows around it.
        expect(Math.abs(s.rowLenCv - exact.rowLenCv) / exact.rowLenCv, at).toBeLessThan(0.4);
        expect(Math.abs(s.top1PctNnzShare - exact.top1PctNnzShare), at).toBeLessThan(0.3);
        expect(s.rowLenMean).toBe(exact.rowLenMean);
      }
      // A small share of an SpMV's reads: at most one row pointer per 1,000 entries.
      expect(counted.reads() / 10).toBeLessThan(nnz / 1000);
    });
  }
});
