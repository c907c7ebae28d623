/**
 * A reference for the decision benches (bench/guards.ts --floor,
 * bench/features-after-kernel.ts --floor), not a feature: the row
 * statistics as if they cost no more than reading their sample. The same
 * blocks as runtime/features/sample-blocks.ts, one pass over them (longest,
 * empty rows, sum of squares), the matrix's exact mean; no search of the
 * gaps for long rows, no longest-1% beyond the longest row, no check of the
 * pointers beyond their sign. Its figures are worse than the runtime's
 * (docs/FEATURES.md says what the search and the top rows are for); its
 * cost is the floor of any statistics read from this sample.
 */
import { blockStart, csrEntries, QUICK_BLOCK_ROWS, quickBlocks } from '../runtime/features/sample-blocks.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import type { CsrMatrix } from '../runtime/tensor.js';

export function bareRowStats(m: CsrMatrix): SparseFeatures {
  const nnz = csrEntries(m);
  const { rows, cols, rowPtr } = m;
  const mean = rows > 0 ? nnz / rows : 0;
  const blocks = quickBlocks(rows, nnz);
  const runs = blocks === 0 ? 1 : blocks;
  const runRows = blocks === 0 ? rows : QUICK_BLOCK_ROWS;
  let max = 0;
  let empty = 0;
  let s1 = 0;
  let s2 = 0;
  let neg = 0;
  for (let b = 0; b < runs; b++) {
    const first = blocks === 0 ? 0 : blockStart(rows, blocks, b, 0);
    const p0 = rowPtr[first]! | 0;
    let end = p0;
    for (let r = first + 1, last = first + runRows; r <= last; r++) {
      const next = rowPtr[r]! | 0;
      const n = (next - end) | 0;
      end = next;
      neg |= n;
      if (n > max) max = n;
      empty += n === 0 ? 1 : 0;
      s2 += n * n;
    }
    s1 += end - p0;
  }
  if (neg < 0) throw new RangeError('bench/bare-scan.ts: row pointers decrease in the sample');
  const count = runs * runRows;
  // Squared deviations about the matrix's exact mean, as the runtime's statistics take them.
  const variance = count > 0 ? Math.max(0, s2 - 2 * mean * s1 + count * mean * mean) / count : 0;
  return {
    rows,
    cols,
    nnz,
    rowLenMean: mean,
    rowLenMax: max,
    rowLenCv: mean > 0 ? Math.sqrt(variance) / mean : 0,
    emptyRowFraction: count > 0 ? empty / count : 0,
    top1PctNnzShare: nnz > 0 ? Math.min(1, (max * Math.ceil(rows / 100)) / nnz) : 0,
  };
}
